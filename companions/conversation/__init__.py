"""Group conversation control: turn-taking, selection, closing, pacing and user control.

Conversation control drives :class:`~companions.conversation.participant.Participant` objects; the real companion
plugs in through an adapter. :class:`~companions.conversation.manager.ConversationManager` is the runtime
component; :class:`~companions.conversation.readmodel.ConversationReadModel` follows it through the bus; the user's
commands are calls on :class:`~companions.conversation.commands.ConversationControl`. The vote, one question
per module: what a vote is (ballot.py), when it is selected and who speaks next (selection.py), who votes
(addressing.py), which turns need no vote (direct.py), how long a vote may take (deadline.py), how the round runs
(vote_round.py).
"""

from companions.conversation.ballot import LISTEN, Vote, VoteNeverComes, VoteOutcome
from companions.conversation.closing import EndReason, RepetitionDetector
from companions.conversation.config import ConversationConfig
from companions.conversation.control_state import ControlOutcome
from companions.conversation.manager import ConversationManager, conversation_manager_from_settings
from companions.conversation.participant import ComposedLine, Description, Pace, Participant, TurnContext
from companions.conversation.readmodel import (
    ConversationChanged,
    ConversationReadModel,
    ConversationView,
    TurnView,
    VoteView,
)
from companions.conversation.selection import Selection, select_speaker

__all__ = [
    "LISTEN",
    "ComposedLine",
    "ControlOutcome",
    "ConversationChanged",
    "ConversationConfig",
    "ConversationManager",
    "ConversationReadModel",
    "ConversationView",
    "Description",
    "EndReason",
    "Pace",
    "Participant",
    "RepetitionDetector",
    "Selection",
    "TurnContext",
    "TurnView",
    "Vote",
    "VoteNeverComes",
    "VoteOutcome",
    "VoteView",
    "conversation_manager_from_settings",
    "select_speaker",
]
