#!/usr/bin/env python3
"""Rebuild the embedded, reference-free `ls_gender` dataset (provenance, not run by setup).

Source: ../shared/data/librispeech-gender/librispeech_test-other: LibriSpeech test-other
(Panayotov et al., CC BY 4.0), 10 utterances from each of 10 speakers (5 female, 5 male),
16 kHz FLAC, and LibriSpeech's SPEAKERS.TXT. No transcripts: TEXT is empty and dataset.yaml
declares `reference_free: true`, so the platform produces hypotheses and claims no error rate.
GENDER (F/M) and SPEAKER come from SPEAKERS.TXT. Audio is decoded to 16-bit WAV (same 16 kHz
samples, lossless), because some model programs read WAV only.

    .venv/bin/python datasets/ls_gender/build_ls_gender.py [--shared ../shared]

The larger, optional set (one utterance from each of 251 train-clean-100 speakers, 126 M /
125 F, 52 minutes) is built the same way into a folder of its own (not committed):

    .venv/bin/python datasets/ls_gender/build_ls_gender.py --subset train-clean-100 \
        --out datasets/ls_gender_251 --id ls_gender_251
"""

from __future__ import annotations

import argparse
from pathlib import Path

import soundfile as sf

HERE = Path(__file__).resolve().parent


def read_speakers(path: Path) -> dict[str, tuple[str, str]]:
    """SPEAKERS.TXT: reader ID -> (sex, subset); `;` lines are comments."""
    out: dict[str, tuple[str, str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith(";"):
            continue
        cells = [c.strip() for c in line.split("|")]
        out[cells[0]] = (cells[1], cells[2])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--shared", type=Path, default=HERE.parents[2] / "shared")
    ap.add_argument("--out", type=Path, default=HERE, help="where to write (default: here)")
    ap.add_argument("--subset", default="test-other", choices=("test-other", "train-clean-100"))
    ap.add_argument("--id", default="ls_gender", help="dataset ID written to dataset.yaml")
    args = ap.parse_args()
    src = args.shared / "data" / "librispeech-gender" / f"librispeech_{args.subset}"
    speakers = read_speakers(src / "SPEAKERS.TXT")
    rows: list[dict[str, str]] = []
    for flac in sorted(src.rglob("*.flac"), key=lambda p: (int(p.stem.split("-")[0]), p.name)):
        uid = flac.stem
        spk = uid.split("-")[0]
        sex, subset = speakers[spk]
        if subset != args.subset or sex not in ("F", "M"):
            raise SystemExit(f"{flac}: SPEAKERS.TXT says {sex}, {subset} for reader {spk}")
        audio, rate = sf.read(str(flac), dtype="int16")
        if rate != 16000 or audio.ndim != 1:
            raise SystemExit(f"{flac}: expected 16 kHz mono, got {rate} Hz, shape {audio.shape}")
        rel = f"audio/{uid}.wav"
        (args.out / "audio").mkdir(parents=True, exist_ok=True)
        sf.write(str(args.out / rel), audio, rate, subtype="PCM_16")
        rows.append({"ID": uid, "AUDIO": rel, "DURATION": f"{len(audio) / rate:.3f}",
                     "TEXT": "", "SPEAKER": spk, "GENDER": sex})
    columns = ["ID", "AUDIO", "DURATION", "TEXT", "SPEAKER", "GENDER"]
    out = "\t".join(columns) + "\n"
    out += "".join("\t".join(r[c] for c in columns) + "\n" for r in rows)
    (args.out / "metadata.tsv").write_text(out, encoding="utf-8")
    if args.out.resolve() != HERE:
        import yaml

        meta = yaml.safe_load((HERE / "dataset.yaml").read_text(encoding="utf-8"))
        meta.update(id=args.id, name=f"LibriSpeech {args.subset}, {len(rows)} utterances by "
                                     "gender (reference-free)",
                    description=f"Built by datasets/ls_gender/build_ls_gender.py --subset "
                                f"{args.subset} from ../shared/data/librispeech-gender; "
                                "see datasets/ls_gender/ATTRIBUTION.md for the licence.")
        meta["sources"] = [{"name": f"LibriSpeech ASR corpus, {args.subset} (Panayotov et al. "
                                    "2015)", "licence": "CC BY 4.0", "utterances": "all"}]
        (args.out / "dataset.yaml").write_text(yaml.safe_dump(meta, sort_keys=False),
                                               encoding="utf-8")
    total = sum(float(r["DURATION"]) for r in rows)
    by_sex = {s: len({r["SPEAKER"] for r in rows if r["GENDER"] == s}) for s in ("F", "M")}
    print(f"{args.id}: {len(rows)} utterances, {total / 60:.1f} min, speakers {by_sex}")


if __name__ == "__main__":
    main()
