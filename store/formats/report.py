"""The format matrix: what each conversion keeps, carries, approximates or drops.

Computed from the bundled samples (``store/samples``): ``python -m store.formats.report``
prints the Markdown tables the README shows.
"""

from __future__ import annotations

from collections import defaultdict

from . import FORMATS, Loss, convert

ACTIONS = ("carried", "approximated", "dropped")


def _samples() -> dict[str, object]:
    from ..demo import samples  # the bundled sample of every format

    return samples()


def pair_losses(data: object, source: str, target: str) -> list[Loss]:
    losses: list[Loss] = []
    convert(data, from_=source, to=target, on_loss=losses.append)
    return losses


def markdown() -> str:
    samples = _samples()
    names = [n for n in FORMATS if n in samples]
    per_target: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    lines = ["| from \\ to | " + " | ".join(f"`{n}`" for n in names) + " |",
             "|---|" + "---|" * len(names)]
    for source in names:
        cells = []
        for target in names:
            losses = pair_losses(samples[source], source, target)
            for loss in losses:
                per_target[target][loss.action].add(loss.field.split("[")[0].split(".")[0])
            counts = {a: len({l.field for l in losses if l.action == a}) for a in ACTIONS}
            cell = " ".join(f"{n}{a[0]}" for a, n in counts.items() if n)
            cells.append("exact" if source == target and not losses else cell or "lossless")
        lines.append(f"| `{source}` | " + " | ".join(cells) + " |")
    lines += ["", "| target | carried in its extension field | approximated | dropped (reported) |", "|---|---|---|---|"]
    for target in names:
        found = per_target[target]
        lines.append(f"| `{target}` | " + " | ".join(", ".join(sorted(found[a])) or "-" for a in ACTIONS) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown())
