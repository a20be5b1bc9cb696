"""Checks and the report: every check has a name, a verdict and what it saw."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Literal

Verdict = Literal["pass", "fail", "skip"]


@dataclass
class Check:
    name: str
    verdict: Verdict
    detail: str = ""


@dataclass
class Report:
    subject: str
    checks: list[Check] = field(default_factory=list)

    def add(self, name: str, ok: bool, detail: str = "") -> bool:
        """Record a check; a name seen before keeps its first failure."""
        for check in self.checks:
            if check.name == name:
                if check.verdict == "pass" and not ok:
                    check.verdict, check.detail = "fail", detail
                return ok
        self.checks.append(Check(name, "pass" if ok else "fail", "" if ok else detail))
        return ok

    def skip(self, name: str, why: str) -> None:
        self.checks.append(Check(name, "skip", why))

    @property
    def failures(self) -> list[Check]:
        return [c for c in self.checks if c.verdict == "fail"]

    @property
    def ok(self) -> bool:
        return not self.failures and any(c.verdict == "pass" for c in self.checks)

    def text(self) -> str:
        marks = {"pass": "ok  ", "fail": "FAIL", "skip": "skip"}
        lines = [f"Tali conformance: {self.subject}"]
        for check in self.checks:
            line = f"  {marks[check.verdict]} {check.name}"
            if check.detail:
                line += f": {check.detail}"
            lines.append(line)
        counts = {v: sum(c.verdict == v for c in self.checks) for v in ("pass", "fail", "skip")}
        lines.append(f"{counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped")
        if "(only " in self.subject:
            lines.append("PASSED (a partial run: not a certificate)" if self.ok else "FAILED")
        else:
            lines.append("CERTIFIED" if self.ok else "NOT CERTIFIED")
        return "\n".join(lines)

    def json(self) -> str:
        return json.dumps(
            {"subject": self.subject, "ok": self.ok, "checks": [asdict(c) for c in self.checks]},
            indent=2,
        )
