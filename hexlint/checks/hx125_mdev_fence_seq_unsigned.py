"""HX125 mdev-fence-seq-unsigned: fence sequence numbers ordered by unsigned comparison, or not advanced."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from hexlint.backend.mdev import settings_from
from hexlint.backend.model import BackendModel
from hexlint.checks._c_helpers import diagnostic_at_place
from hexlint.core import Diagnostic

CODE = "HX125"


def check(model: BackendModel, options: Mapping[str, Any]) -> Iterator[Diagnostic]:
    counter = settings_from(options).sequence_counter
    for issue in model.mdev_sequence_issues(options):
        if issue.kind == "unsigned-compare":
            message = (
                f"`{issue.text}` orders fence sequence numbers as unsigned values: after wrap-around a peer ahead "
                "looks behind; compare the signed difference, `(int32_t)(peer_seq - seq) >= 0`."
            )
        else:
            message = (
                f"the fence is written with `{issue.text}`, which reads the sequence counter without advancing it: "
                f"two barriers share one number; take `++ctx->mdev.{counter}`."
            )
        yield diagnostic_at_place(CODE, issue.place, message)
