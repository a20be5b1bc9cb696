"""JSON log lines: whatever a log call is given, it writes one line of JSON."""

from __future__ import annotations

import json

from server.runtime.logs import _json


def test_a_record_is_one_compact_json_line() -> None:
    line = _json({"event": "hand_ended", "hand": 3, "winners": ["p_a"]})
    assert line == '{"event":"hand_ended","hand":3,"winners":["p_a"]}'


def test_values_json_cannot_hold_are_logged_as_their_repr() -> None:
    record = json.loads(_json({"error": ValueError("boom"), "raw": b"\xff", "seats": (1, 2)}))
    assert record == {"error": "ValueError('boom')", "raw": "b'\\xff'", "seats": [1, 2]}


def test_a_string_the_fast_encoder_refuses_is_still_logged() -> None:
    line = _json({"name": "half \ud800 a pair"})
    assert "\n" not in line
    assert json.loads(line) == {"name": "half \ud800 a pair"}
