"""Epochs in which the simulator wrote no valid task: warned about, with its rejection reasons.

With no valid generated task an epoch trains the agent on replayed and base tasks only: plain GRPO.
One such epoch is worth a warning that says why (the simulator's rejections, counted by reason);
``curriculum.max_empty_epochs_warning`` of them in a row means the run has silently become plain
GRPO, and the console says so on every further such epoch. :class:`EmptyEpochs` keeps the streak
(in the callback's checkpoint state); :func:`reasons_text` and the messages are pure.

Deliberately left out: stopping the run or retrying generations (a run may legitimately pass through
a few empty epochs, and the rejection rate is a metric); the static and none task sources (their
tasks are valid by construction, or there are none by choice).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


def reasons_text(reasons: Counter) -> str:
    """``"not_json 5, unknown_tool 2"``: the most frequent first."""
    return ", ".join(f"{reason} {n}" for reason, n in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])))


@dataclass
class EmptyEpochs:
    limit: int  # curriculum.max_empty_epochs_warning
    streak: int = 0  # epochs in a row without a valid generated task, up to the last one seen
    reasons: Counter = field(default_factory=Counter)  # the streak's rejections, by reason

    def observe(self, epoch: int, written: int, valid: int, reasons: Counter) -> tuple[str | None, str | None]:
        """One epoch's count of written and valid generated tasks; returns ``(warning, console)``: the
        empty epoch's warning, and the line for the console once the streak reaches the limit. ``epoch`` is
        0-based; the messages count from 1, as the console's epoch lines do."""
        if valid or not written:
            self.streak, self.reasons = 0, Counter()
            return None, None
        self.streak += 1
        self.reasons.update(reasons)
        warning = (f"epoch {epoch + 1}: none of the simulator's {written} generated tasks was valid (rejected: "
                   f"{reasons_text(reasons) or 'no reason recorded'}); the agent trains on replayed and base "
                   f"tasks only this epoch")
        if self.streak < self.limit:
            return warning, None
        console = (f"WARNING: {self.streak} epochs in a row (epochs {epoch - self.streak + 2}-{epoch + 1}) without a "
                   f"single valid generated task: the run is plain GRPO on the base set. The simulator's "
                   f"rejections over them: {reasons_text(self.reasons)} (sim/invalid/* in the logs; "
                   f"curriculum.max_empty_epochs_warning={self.limit})")
        return warning, console

    def state_dict(self) -> dict:
        return {"streak": self.streak, "reasons": dict(self.reasons)}

    def load_state_dict(self, state: dict | None) -> None:
        state = state or {}  # a checkpoint from before this counter
        self.streak, self.reasons = state.get("streak", 0), Counter(state.get("reasons", {}))
