"""Seeded generator of realistic belief networks (issue 7), written as ftl-reasons network.json.

Shape, after the real networks in ../shared/networks: about 60% premises; derived beliefs on
levels up to about 20 (each cites at least one belief of the level below, so depth grows);
1-5 antecedents per justification; some outlists; some beliefs with several justifications;
a few hub premises with thousands of dependents; claims of 40-1,100 characters with
non-ASCII text; some retracted (OUT) premises. Same seed, same bytes.

    python bench/generate.py 10000 -o /tmp/n10k.json [--seed 7] [--chain] [--fan]
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from site_builder.evaluate import evaluate  # noqa: E402
from site_builder.model import IN, OUT, Belief, Justification, Network  # noqa: E402
from site_builder.serialize import write_network_json  # noqa: E402

WORDS = ("attention", "gradient", "cache", "replica", "quorum", "latency", "schema", "index",
         "invariant", "façade", "naïve", "coördination", "entropy", "λ-calculus", "résumé",
         "consensus", "shard", "monotonic", "idempotent", "causal", "vector", "clock", "token",
         "Δ-state", "α-equivalence", "≤ bound", "→ implies", "logarithmic", "throughput", "lease")
STAMP = "2026-06-20T01:30:39+00:00"


def _claim(rng: random.Random) -> str:
    """A claim of 40-1,100 characters, most of them short (as in the real data)."""
    target = min(1100, max(40, int(rng.lognormvariate(5.2, 0.55))))
    words = []
    while sum(len(w) + 1 for w in words) < target:
        words.append(rng.choice(WORDS))
    text = " ".join(words)[: target - 1].rstrip()
    return text[0].upper() + text[1:] + "."


def _levels(n: int, rng: random.Random) -> list[int]:
    """Level per belief: 60% premises at 0, derived on 1..20 with fewer on deeper levels."""
    premises = int(n * 0.6)
    weights = [1 / (level ** 0.9) for level in range(1, 21)]
    derived = rng.choices(range(1, 21), weights=weights, k=n - premises)
    # Small networks can miss a level; renumber so every level cites a non-empty one below.
    rank = {level: i + 1 for i, level in enumerate(sorted(set(derived)))}
    return [0] * premises + sorted(rank[level] for level in derived)


def generate(n: int, seed: int = 7) -> Network:
    """A network of n beliefs."""
    rng = random.Random(seed)
    levels = _levels(n, rng)
    ids = [f"b{i:06d}-{rng.choice(WORDS).split()[-1].replace('λ-', 'l').lower()}" for i in range(n)]
    ids = [_slug(i) for i in ids]
    by_level: dict[int, list[str]] = {}
    for belief_id, level in zip(ids, levels):
        by_level.setdefault(level, []).append(belief_id)
    hubs = by_level[0][: max(2, n // 5000)]  # each gets about 1,000+ dependents
    beliefs = {}
    for belief_id, level in zip(ids, levels):
        declared = OUT if level == 0 and rng.random() < 0.01 else IN
        justs = () if level == 0 else _justifications(rng, level, by_level, hubs)
        beliefs[belief_id] = Belief(belief_id, _claim(rng), declared, justifications=justs,
                                    source=f"entries/2026/06/{rng.randint(1, 28):02d}/note.md",
                                    created_at=STAMP, updated_at=STAMP)
    return Network(dict(sorted(beliefs.items())), meta={"schema_version": "1.0",
                                                        "project_name": "generated", "node_count": n})


def _slug(raw: str) -> str:
    kept = "".join(c if c.isascii() and (c.isalnum() or c == "-") else "-" for c in raw.lower())
    while "--" in kept:
        kept = kept.replace("--", "-")
    return kept.strip("-")


def _justifications(rng, level, by_level, hubs) -> tuple[Justification, ...]:
    count = 1 if rng.random() < 0.9 else rng.randint(2, 3)
    justs = []
    for _ in range(count):
        antecedents = {rng.choice(by_level[level - 1])}
        for _ in range(rng.randint(0, 4)):
            antecedents.add(rng.choice(by_level[rng.randint(0, level - 1)]))
        if rng.random() < 0.5:
            antecedents.add(rng.choice(hubs))  # hubs collect thousands of dependents
        outlist = (rng.choice(by_level[rng.randint(0, level - 1)]),) if rng.random() < 0.05 else ()
        outlist = tuple(o for o in outlist if o not in antecedents)
        justs.append(Justification("SL", tuple(sorted(antecedents)), outlist, "generated"))
    return tuple(justs)


def chain(n: int) -> Network:
    """A single chain of n beliefs: the deepest possible network."""
    beliefs = {"c000000": Belief("c000000", "The root premise.")}
    for i in range(1, n):
        beliefs[f"c{i:06d}"] = Belief(f"c{i:06d}", f"Step {i} of the chain.",
                                      justifications=(Justification("SL", (f"c{i - 1:06d}",)),))
    return Network(beliefs, meta={"schema_version": "1.0", "node_count": n})


def fan(n: int) -> Network:
    """One premise with n - 1 dependents: the widest possible network."""
    beliefs = {"hub": Belief("hub", "The hub premise.")}
    for i in range(1, n):
        beliefs[f"d{i:06d}"] = Belief(f"d{i:06d}", f"Dependent {i}.",
                                      justifications=(Justification("SL", ("hub",)),))
    return Network(beliefs, meta={"schema_version": "1.0", "node_count": n})


def with_stored_values(network: Network) -> str:
    """network.json text whose stored truth values are the computed ones (no W501)."""
    return write_network_json(network, evaluate(network, limit=10))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("n", type=int)
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--seed", type=int, default=7)
    shape = parser.add_mutually_exclusive_group()
    shape.add_argument("--chain", action="store_true", help="one chain of n beliefs")
    shape.add_argument("--fan", action="store_true", help="one premise with n-1 dependents")
    args = parser.parse_args(argv)
    network = chain(args.n) if args.chain else fan(args.n) if args.fan else generate(args.n, args.seed)
    Path(args.output).write_text(with_stored_values(network), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
