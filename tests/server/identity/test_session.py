"""Sessions: the data of a player across connections."""

from __future__ import annotations

import sys

from server.identity.session import Session


def test_a_session_keeps_its_fields_in_slots_not_a_dict_each() -> None:
    """A server holds a session for every player (2,000 at 500 rooms of four)."""
    session = Session(player_id="p_Aulus", key="k" * 64, name="Aulus")
    assert not hasattr(session, "__dict__")
    assert sys.getsizeof(session) < 200
