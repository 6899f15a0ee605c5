"""Can a model verify? The verification call (``nodes/finalize.py: verifier_for``) on cases whose truth is known.

``python -m longgraph.evals.bench.verify_probe [--seeds 3] [--split dev] [--by call|words]``

Why: a model gets the verification call by default only if it tells a right answer from a wrong one
(``longgraph/endpoint.py`` ``MODEL_PROFILES``). This asks the call, through the project's own prompt and
structured path, about cases built from the general suite's templates: the right value in its
sentence (asked in the question's words and in a paraphrase), a look-alike's value in the look-alike's
sentence, another fact about the asked entity, another thing of the asked name ("the X flour
shop" for the X flour mill), and a two-hop question answered with the chain's bridge. ``--by words``
asks the checks alone (``nodes/checks``: what stands by its words, no call). It prints the share of "yes" per
kind: a model that can verify says yes to the right cases and no to the others; one at chance says
yes to all alike. The embedded server is reused if one runs, otherwise started.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
from collections import defaultdict
from collections.abc import Sequence
from contextlib import ExitStack
from typing import Any

from longgraph.evals.bench import bench_endpoint, endpoint_label, print_figures
from longgraph.evals.data.general import HOPS, TEMPLATES, Split, distinct_entities, made_up_name, person_name
from longgraph.llm import default_provider
from longgraph.nodes.checks import judge, read_question
from longgraph.nodes.finalize import verifier_for
from longgraph.nodes.kit import build_kit
from longgraph.state.context import Context
from longgraph.state.contract import Evidence

Case = tuple[str, str, str, str, str]
"""(kind, question, proposed answer, the sentences shown, the planted sentences of its document): the
document is kept for inspection."""


def cases(split: Split, seeds: int) -> list[Case]:
    out: list[Case] = []
    for template in (t for t in TEMPLATES if t.split == split):
        for seed in range(seeds):
            rng = random.Random(f"probe:{seed}:{template.name}")
            a, b = distinct_entities(template, rng, 2)
            va = template.value(rng)
            vb = template.value(rng)
            while vb == va:
                vb = template.value(rng)
            right, other = template.sentence.format(e=a, v=va), template.sentence.format(e=b, v=vb)
            fact = rng.choice([t for t in TEMPLATES if t.split == split and t is not template])
            vf = fact.value(rng)
            about = fact.sentence.format(e=a, v=vf)
            both = f"{right} {other}"
            out += [
                ("right", template.question.format(e=a), va, right, both),
                ("right, paraphrased question", template.paraphrase.format(e=a), va, right, both),
                ("look-alike's value", template.question.format(e=a), vb, other, both),
                ("another fact about it", template.paraphrase.format(e=a), vf, about, f"{about} {other}"),
            ]
    out += same_name_other_thing(split, seeds)
    for _, which, first, second, question in HOPS:
        if which != split:
            continue
        for seed in range(seeds):
            rng = random.Random(f"probe:{seed}:{question}")
            e, p, v = made_up_name(rng), person_name(rng), made_up_name(rng)
            chain = f"{first.format(e=e, p=p)} {second.format(p=p, v=v)}"
            out += [
                ("two-hop, the chain's end", question.format(e=e), v, chain, chain),
                ("two-hop, the bridge", question.format(e=e), p, first.format(e=e, p=p), chain),
            ]
    return out


OTHER_PLACES = ("depot", "shop", "yard", "office", "warehouse", "stall")
"""Nouns that make another thing of a name's compound ("the X flour *shop*")."""


def same_name_other_thing(split: Split, seeds: int) -> list[Case]:
    """Another thing of the asked name: the template's own sentence with the last noun of its entity
    replaced ("The X flour shop …" for the X flour mill), where the template's ``collective``
    says which words its entity's compound is ("flour mills"). Its value is the answer, and it must not
    stand: the question asks about another thing."""
    out: list[Case] = []
    for template in (t for t in TEMPLATES if t.split == split and t.entity is made_up_name):
        kind = template.collective.split()
        found = (
            re.search(rf"\{{e\}} ({re.escape(kind[0])}) ([a-z]+)\b", template.sentence)
            if len(kind) == 2
            else None
        )
        if found is None or not kind[1].startswith(found.group(2)[: max(3, len(found.group(2)) - 1)]):
            continue
        for seed in range(seeds):
            rng = random.Random(f"probe:{seed}:{template.name}:another thing")
            entity, value = made_up_name(rng), template.value(rng)
            other = rng.choice([n for n in OTHER_PLACES if n != found.group(2)])
            sentence = template.sentence.replace(found.group(0), f"{{e}} {kind[0]} {other}").format(
                e=entity, v=value
            )
            out.append(
                ("same name, another thing", template.question.format(e=entity), value, sentence, sentence)
            )
    return out


def real_cases(split: Split, n: int) -> list[Case]:
    """Verification cases from the real suite's human-written questions (``evals/data/real.py``).

    Right: the gold answer with its gold sentences. Wrong, built without any rule about wording: the
    gold of *another* question on the same article or item set (a real span of the same topic) shown
    with that question's own sentence, and shown with this question's sentence; for a yes/no question
    the other verdict; for an unanswerable SQuAD question, an answer to another question of its article
    with that answer's sentence (SQuAD v2 writes these to look answerable by their paragraph).
    """
    from longgraph.evals.data.real import cases as real_pool
    from longgraph.evals.metrics import normalize_answer

    out: list[Case] = []
    squad = real_pool("squad", split)
    by_article: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for case in squad:
        by_article[case["key"]].append(case)

    def other_of(case: dict[str, Any], pool: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
        mine = {normalize_answer(g) for g in case["gold"]}
        for other in pool:
            theirs = {normalize_answer(g) for g in other["gold"]}
            if other["id"] != case["id"] and not any(a in b or b in a for a in mine for b in theirs):
                return other
        return None

    for case in squad[:n]:
        document = " ".join(case["paragraphs"])
        right = " ".join(case["facts"])
        out.append(("right", case["question"], case["gold"][0], right, document))
        other = other_of(case, by_article[case["key"]])
        if other is not None:
            theirs = " ".join(other["facts"])
            out.append(
                (
                    "another question's answer, its sentence",
                    case["question"],
                    other["gold"][0],
                    theirs,
                    document,
                )
            )
            out.append(
                (
                    "another question's answer, this sentence",
                    case["question"],
                    other["gold"][0],
                    right,
                    document,
                )
            )
    for case in real_pool("squad-unanswerable", split)[:n]:
        other = other_of(case, by_article.get(case["key"], ()))
        if other is not None:
            out.append(
                (
                    "unanswerable, an answer to another question",
                    case["question"],
                    other["gold"][0],
                    " ".join(other["facts"]),
                    " ".join(case["paragraphs"]),
                )
            )
    for kind in ("hotpot-bridge", "hotpot-comparison"):
        pool = real_pool(kind, split)
        for index, case in enumerate(pool[:n]):
            document = " ".join(case["paragraphs"])
            facts = " ".join(case["facts"])
            gold = case["gold"][0]
            out.append((f"right, {kind}", case["question"], gold, facts, document))
            if gold.lower() in ("yes", "no"):
                flipped = "no" if gold.lower() == "yes" else "yes"
                out.append((f"the other verdict, {kind}", case["question"], flipped, facts, document))
                continue
            other = other_of(case, pool[index + 1 :] + pool[:index])
            if other is not None:
                out.append(
                    (
                        f"another question's answer, {kind}",
                        case["question"],
                        other["gold"][0],
                        facts,
                        document,
                    )
                )
    return out


def shown_quote(case: Case) -> Evidence:
    """The case's sentences as one quote, as a chunk's reading would cite them."""
    sentences = case[3]
    return Evidence(chunk_id=0, title="", doc_index=0, start=0, end=len(sentences), text=sentences)


async def words_verdict(case: Case) -> bool:
    """Whether the checks (``nodes/checks``) let the case's answer stand on its verified sentences by
    its words alone, with no call."""
    _, question, answer, _, _ = case
    quote = shown_quote(case).model_copy(update={"verified": True})
    judged = await judge(answer, read_question(question), [quote], None)
    return judged.verdict == "supported"


async def probe(all_cases: Sequence[Case], settings: dict[str, Any], by: str = "call") -> dict[str, object]:
    said: dict[str, list[bool]] = defaultdict(list)
    calls = 0
    if by == "words":  # no call: nothing to build
        for case in all_cases:
            said[case[0]].append(await words_verdict(case))
        return tally(said, calls)
    kit = await build_kit(Context(**{**settings, "verify_answers": "on"}), default_provider)
    for case in all_cases:
        kind, question, answer, _, _ = case
        verify = verifier_for(kit, question)
        assert verify is not None  # verify_answers is on
        checked = await verify(answer, [shown_quote(case)])
        said[kind].append(checked.outcome == "supported")
        calls += checked.usage.llm_calls
    return tally(said, calls)


def tally(said: dict[str, list[bool]], calls: int) -> dict[str, object]:
    """The share of "yes" per kind, and how far the right cases' share stands above the wrong ones'."""
    figures: dict[str, object] = {
        f"yes, {kind}": f"{sum(v)}/{len(v)} ({sum(v) / len(v):.2f})" for kind, v in said.items()
    }
    right = [x for k, v in said.items() if k.startswith(("right", "two-hop, the chain")) for x in v]
    wrong = [x for k, v in said.items() if not k.startswith(("right", "two-hop, the chain")) for x in v]
    figures["yes rate, right cases minus wrong cases"] = round(
        sum(right) / len(right) - sum(wrong) / len(wrong), 2
    )
    figures["accuracy (yes to right, no to wrong)"] = round(
        (sum(right) + len(wrong) - sum(wrong)) / (len(right) + len(wrong)), 3
    )
    figures["calls"] = calls
    return figures


def main(argv: Sequence[str] | None = None) -> dict[str, object]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--split", choices=("dev", "test"), default="dev")
    parser.add_argument("--stub", action="store_true", help="the stub's oracle instead of the embedded vLLM")
    parser.add_argument(
        "--suite",
        choices=("templated", "real"),
        default="templated",
        help="cases from the templated suite, or from the real suite's human-written questions",
    )
    parser.add_argument("--n", type=int, default=20, help="questions per kind (--suite real)")
    parser.add_argument(
        "--by",
        choices=("call", "words"),
        default="call",
        help="the model's verification call, or the checks' words alone",
    )
    args = parser.parse_args(argv)
    embedded = not args.stub and args.by == "call"
    with ExitStack() as stack:
        # The words alone make no call: no server is started for them.
        endpoint = {} if args.by == "words" else bench_endpoint(stack, embedded=embedded, latency=0.0)[0]
        chosen = real_cases(args.split, args.n) if args.suite == "real" else cases(args.split, args.seeds)
        figures = asyncio.run(probe(chosen, {**endpoint, "cache_path": ""}, args.by))
    reader = endpoint_label(embedded=embedded, latency=0.0) if args.by == "call" else "the words (no call)"
    print_figures("can the model verify?", {"reader": reader, **figures})
    return figures


if __name__ == "__main__":
    main()
