"""Per-utterance results and pooled corpus metrics: TER (WER/CER), mTER, SER, C/S/D/I."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class UtteranceResult:
    """One utterance scored: tokens, the chosen hypothesis path and its edit ops.

    `hyp` is the hypothesis as aligned: after DAE it holds the chosen branch of each slot.
    `codes` has one letter per alignment column: C(orrect), S(ub), D(el), I(ns).
    `alternatives` lists (hyp start, hyp end, chosen form, written form) for each slot whose
    chosen form differs from what the system wrote.
    """

    id: str
    ref: list[str]
    hyp: list[str]
    codes: str
    missing: bool = False
    alternatives: list[tuple[int, int, str, str]] = field(default_factory=list)
    cor: int = 0
    sub: int = 0
    ins: int = 0
    dele: int = 0

    def __post_init__(self) -> None:
        c = self.codes
        self.cor, self.sub, self.ins, self.dele = (
            c.count("C"),
            c.count("S"),
            c.count("I"),
            c.count("D"),
        )

    @property
    def n_ref(self) -> int:
        return len(self.ref)

    @property
    def n_hyp(self) -> int:
        return len(self.hyp)

    @property
    def errors(self) -> int:
        return self.sub + self.ins + self.dele

    @property
    def ter(self) -> float | None:
        """Edits / |ref|; undefined (None) for an empty reference."""
        return self.errors / self.n_ref if self.n_ref else None

    @property
    def mter(self) -> float:
        """Edits / max(|ref|, |hyp|): bounded in [0, 1], defined for an empty reference."""
        denom = max(self.n_ref, self.n_hyp)
        return self.errors / denom if denom else 0.0

    @property
    def ops(self) -> list[tuple[str, str | None, str | None]]:
        """Alignment columns as (op, ref token or None, hyp token or None)."""
        out: list[tuple[str, str | None, str | None]] = []
        i = j = 0
        ref, hyp = self.ref, self.hyp
        for op in self.codes:
            if op == "D":
                out.append((op, ref[i], None))
                i += 1
            elif op == "I":
                out.append((op, None, hyp[j]))
                j += 1
            else:
                out.append((op, ref[i], hyp[j]))
                i += 1
                j += 1
        return out

    def to_dict(self) -> dict:
        """The JSONL record (valid JSON: an undefined TER is null)."""
        return {
            "id": self.id,
            "ter": self.ter,
            "mter": self.mter,
            "n_ref": self.n_ref,
            "n_hyp": self.n_hyp,
            "cor": self.cor,
            "sub": self.sub,
            "ins": self.ins,
            "del": self.dele,
            "missing": self.missing,
            "ops": [list(op) for op in self.ops],
            "alternatives": [
                {"hyp_start": a, "hyp_end": b, "chosen": c, "written": w}
                for a, b, c, w in self.alternatives
            ],
        }


def pooled(utts: list[UtteranceResult], unit: str = "word") -> dict:
    """Corpus totals: sums of counts, pooled TER/mTER (ratios of sums), SER and coverage."""
    n = len(utts)
    cor = sub = ins = dele = n_ref = n_hyp = denom_m = missing = wrong = empty_ref = 0
    for u in utts:  # one pass, plain attributes: this runs over every utterance
        nr, nh = len(u.ref), len(u.hyp)
        e = u.sub + u.ins + u.dele
        cor += u.cor
        sub += u.sub
        ins += u.ins
        dele += u.dele
        n_ref += nr
        n_hyp += nh
        denom_m += nr if nr > nh else nh
        missing += u.missing
        wrong += e > 0
        empty_ref += nr == 0
    errors = sub + ins + dele
    out = {
        "unit": unit,
        "n_utts": n,
        "n_ref": n_ref,
        "n_hyp": n_hyp,
        "cor": cor,
        "sub": sub,
        "ins": ins,
        "del": dele,
        "errors": errors,
        "ter": errors / n_ref if n_ref else None,
        "mter": errors / denom_m if denom_m else 0.0,
        "ser": wrong / n if n else None,
        "n_missing": missing,
        "n_empty_ref": empty_ref,
        "coverage": (n - missing) / n if n else None,
    }
    out["cer" if unit == "char" else "wer"] = out["ter"]
    return out
