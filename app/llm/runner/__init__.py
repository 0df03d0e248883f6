"""The embedded model runner: Madoi runs a GGUF model itself (llama.cpp through llama-cpp-python) in a child
process it owns, behind the same OpenAI-compatible API as a user's own server.

    runner = ModelRunner(RunnerOptions(Path("model.gguf")), log_dir=data_dir / "logs")
    endpoint = await runner.start()      # Endpoint(base_url="http://127.0.0.1:PORT/v1", model=..., api_key=...)
    runner.subscribe(on_status)          # starting / ready / crashed / restarting / stopped / failed, with a reason
    await runner.stop()
"""

from app.llm.runner.options import RunnerOptions, default_threads
from app.llm.runner.runner import (
    Endpoint,
    ModelRunner,
    RestartPolicy,
    RunnerError,
    RunnerState,
    RunnerStatus,
)

__all__ = ["Endpoint", "ModelRunner", "RestartPolicy", "RunnerError", "RunnerOptions", "RunnerState",
           "RunnerStatus", "default_threads"]
