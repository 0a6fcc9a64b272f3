"""`beliefs.json`, its schema `beliefs.schema.json`, and `belief/<id>/index.json` (DESIGN "URLs").

Panels in `index.json` (explain, trace, impact) are `{"items", "count", "complete"}` with at
most `panel_max_items` items, and hidden beliefs removed:

- `count` counts visible items only; hidden beliefs are never counted (DESIGN "partial
  publishing"). `complete` says whether `count` is exact (as `queries.Bounded`): when false
  the bounded search stopped and `count` is a lower bound (pages show it as "N+"). `items`
  may be shorter than an exact `count` (trace with an evaluation limit above the panel's).
- explain walks only through visible beliefs: a hidden belief is neither a step nor a way
  to further steps, and ids of hidden beliefs inside a step are removed.
- trace and impact are the evaluation's bounded answers with hidden ids filtered out; when
  the underlying answer was cut short, the panel stays `complete: false` even if every
  visible item happens to be shown.
"""

from __future__ import annotations

from importlib import resources
from typing import Any, Iterator

from ... import urls
from ...evaluate.queries import Step
from ...model import Belief
from .. import OutputFile, RenderContext
from ..rows import cited, memo
from .records import GENERATOR, SCHEMA_VERSION, belief_record, compact, counts, published

SCHEMA_FILE = "beliefs.schema.json"


def dumps(value: Any) -> bytes:
    """The one JSON encoding of the site: UTF-8, compact, key order as built, final newline."""
    # Compact: the C encoder is about 4x faster than the indenting one (0.07 vs 0.29 ms a belief).
    return (compact(value) + "\n").encode("utf-8")


def schema_bytes() -> bytes:
    """The published JSON Schema, a data file of the package."""
    return resources.files("site_builder.render").joinpath(SCHEMA_FILE).read_bytes()


def _panel(items: list, count: int, complete: bool) -> dict[str, Any]:
    return {"items": items, "count": count, "complete": complete}


def _step(ctx: RenderContext, step: Step) -> dict[str, Any]:
    states = []
    for s in step.justifications:
        lists = {name: published(ctx, getattr(s, name)) for name in
                 ("antecedents", "outlist", "failed", "missing", "violated")}
        states.append({"index": s.index, "type": s.type, "label": s.label, "valid": s.valid, **lists})
    return {"id": step.id, "value": step.value, "reason": step.reason, "justifications": states}


def _step_json(ctx: RenderContext, step: Step) -> str:
    """`_step`, encoded. A belief's step is one object on every page that explains through it
    (queries.explain's memo): encoded once per process, not once per page (a chain's pages
    list 100 steps each). Its ids are its belief's antecedents and outlist, whose reads the
    memo notes for every page that takes it (render.belief._SeenSteps)."""
    key = ("step json", step.id)
    found = ctx.memo.get(key)
    if found is None or found[0] is not step:
        found = ctx.memo[key] = (step, compact(_step(ctx, step)))
    return found[1]


def _explain_json(ctx: RenderContext, belief_id: str) -> str:
    """Why the belief is IN/OUT (render.panels: walks visible beliefs only, bounded), encoded."""
    result = ctx.panels_of(belief_id).explain
    steps = ",".join([_step_json(ctx, s) for s in result.items])
    return f'{{"items":[{steps}],"count":{result.count},"complete":{compact(result.complete)}}}'


def trace_panel(ctx: RenderContext, belief_id: str) -> dict[str, Any]:
    """The premises the belief rests on, hidden ones removed."""
    result = ctx.panels_of(belief_id).trace
    return _panel(list(result.items), result.count, result.complete)


def impact_panel(ctx: RenderContext, belief_id: str) -> dict[str, Any]:
    """Beliefs whose status changes if this one flips, with their new value; hidden removed."""
    result = ctx.panels_of(belief_id).impact
    return _panel([{"id": i, "value": new} for i, new in result.items], result.count, result.complete)


def emit(ctx: RenderContext) -> Iterator[OutputFile]:
    """beliefs.json and beliefs.schema.json (each belief's index.json comes with its page)."""
    yield OutputFile("beliefs.json", _beliefs_json(ctx))
    yield OutputFile(SCHEMA_FILE, schema_bytes())


def _beliefs_json(ctx: RenderContext) -> bytes:
    """`dumps` of the whole file, with each record encoded on its own (kept by the build cache:
    render/rows.py) and put where the encoder would put it: `"beliefs"` is the last key."""
    kept, shown = memo(ctx, "records"), ctx.shown()
    records = kept.joined([b.id for b in shown], lambda k: compact(belief_record(ctx, shown[k])), ",",
                          [cited(b) for b in shown])
    kept.done()
    head = compact({"schema_version": SCHEMA_VERSION, "generator": GENERATOR,
                     "site_name": ctx.config.site_name, "counts": counts(ctx), "beliefs": []})
    return head[:-2].encode("utf-8") + records + b"]}\n"


def belief_json(ctx: RenderContext, belief: Belief) -> OutputFile:
    """`belief/<id>/index.json`: the belief's record and its panels."""
    record = belief_record(ctx, belief)
    path = urls.json_path(belief.id, ctx.config.prefix)
    head = compact({"schema_version": SCHEMA_VERSION, "generator": GENERATOR,
                    "site_root": "../" * path.count("/"), **record})
    # `dumps` of the whole, with the explanation's steps spliced in as encoded (the last keys)
    return OutputFile(path, (f'{head[:-1]},"explain":{_explain_json(ctx, belief.id)},'
                             f'"trace":{compact(trace_panel(ctx, belief.id))},'
                             f'"impact":{compact(impact_panel(ctx, belief.id))}}}\n').encode("utf-8"))
