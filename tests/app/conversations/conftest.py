"""The conversation simulations of the core's tests (a real manager on a real bus), for the parts of app/ that
drive a conversation."""

from tests.companions.conftest import sim_factory

__all__ = ["sim_factory"]
