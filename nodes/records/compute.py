"""Compute a plan's operation over checked records with SQL our code writes, and word the result.

The records go into an in-memory SQLite table ``r(id, k, v)`` (``k``: the key field's value folded for
comparison, ``v``: the value field, REAL for numeric operations; a set operation's labels, folded, in
``labels(pos, v)``); each operation is one of the fixed
statements below, and every value the plan or a document supplies (a range, a filter, a start, a
limit) is a bound parameter. No text from the model or the document ever becomes SQL, so a hostile
document can make nothing run but these statements. ``chain`` and ``closure`` walk links with one
parameterised lookup per step, bounded by the number of records.

Computing over zero records gives no value: the run answers NO INFORMATION, never 0.
"""

from __future__ import annotations

import sqlite3
import unicodedata
from collections.abc import Callable, Sequence
from typing import Any

from longgraph.state.records import NUMERIC, SETS, Computation, Record, RecordPlan

_STATEMENTS: dict[str, str] = {
    "list": "SELECT v FROM r WHERE (? = '' OR k = ?) GROUP BY v ORDER BY MIN(id)",
    "count": "SELECT COUNT(DISTINCT k) FROM r",
    "sum": "SELECT SUM(v) FROM r",
    "mean": "SELECT AVG(v) FROM r",
    "min": "SELECT MIN(v) FROM r",
    "max": "SELECT MAX(v) FROM r",
    "argmax": "SELECT id FROM r ORDER BY v DESC, id LIMIT 1",
    "argmin": "SELECT id FROM r ORDER BY v ASC, id LIMIT 1",
    "sort_desc": "SELECT id FROM r ORDER BY v DESC, id",
    "sort_asc": "SELECT id FROM r ORDER BY v ASC, id",
    "between": "SELECT id FROM r WHERE v BETWEEN ? AND ? ORDER BY id",
    "group": "SELECT v, id FROM r ORDER BY id",
    "top_k": "SELECT v, COUNT(*) AS n FROM r GROUP BY v ORDER BY n DESC, MIN(id) LIMIT ?",
    "follow": "SELECT id, v FROM r WHERE k = ? ORDER BY id LIMIT 1",
    "holders": "SELECT id, k FROM r WHERE v = ? ORDER BY id",
    "union": "SELECT k FROM r WHERE v IN (SELECT v FROM labels) GROUP BY k ORDER BY MIN(id)",
    "intersection": "SELECT k FROM r WHERE v IN (SELECT v FROM labels) GROUP BY k "
    "HAVING COUNT(DISTINCT v) = (SELECT COUNT(*) FROM labels) ORDER BY MIN(id)",
    "difference": "SELECT k FROM r WHERE v = (SELECT v FROM labels WHERE pos = 0) AND k NOT IN "
    "(SELECT k FROM r WHERE v IN (SELECT v FROM labels WHERE pos > 0)) GROUP BY k ORDER BY MIN(id)",
}
"""Every statement the records path can run: nothing else is ever given to SQLite."""


def fold(text: str) -> str:
    """How two spellings of one name compare: Unicode-normalised, case-folded, single-spaced."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def _number(value: str | float) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _table(plan: RecordPlan, records: Sequence[Record]) -> sqlite3.Connection:
    numeric = plan.operation in NUMERIC
    db = sqlite3.connect(":memory:")
    db.execute(f"CREATE TABLE r (id INTEGER PRIMARY KEY, k TEXT, v {'REAL' if numeric else 'TEXT'})")
    rows = []
    for i, record in enumerate(records):
        value = record.values.get(plan.value, "")
        shown = value if numeric else fold(str(value))
        rows.append((i, fold(str(record.values.get(plan.key, ""))), shown))
    db.executemany("INSERT INTO r VALUES (?, ?, ?)", rows)
    db.execute("CREATE TABLE labels (pos INTEGER PRIMARY KEY, v TEXT UNIQUE)")
    labels = dict.fromkeys(fold(label) for label in plan.labels if label.strip())  # first spelling wins
    db.executemany("INSERT INTO labels VALUES (?, ?)", list(enumerate(labels)))
    return db


def compute(plan: RecordPlan, records: Sequence[Record]) -> Computation:
    """``plan``'s operation over ``records`` (checked and reconciled), worded; an empty answer when there
    is nothing to compute over or nothing matched."""
    if not records:
        return Computation(plan=plan, answer="", explanation="no record was found to compute over")
    db = _table(plan, records)
    try:
        return _run(plan, records, db)
    finally:
        db.close()


def _key(record: Record, plan: RecordPlan) -> str:
    return str(record.values.get(plan.key, ""))


def _value(record: Record, plan: RecordPlan) -> str:
    return _number(record.values.get(plan.value, ""))


def _run(plan: RecordPlan, records: Sequence[Record], db: sqlite3.Connection) -> Computation:
    op = plan.operation
    first_of: dict[str, Record] = {}
    for record in records:  # the spelling a value is shown in: its first record's
        first_of.setdefault(fold(_value(record, plan)), record)

    def done(answer: str, value: Any, sql: str, used: Sequence[Record], why: str) -> Computation:
        return Computation(plan=plan, answer=answer, value=value, sql=sql, used=list(used), explanation=why)

    if op == "list":
        where = fold(plan.where)
        sql = _STATEMENTS["list"]
        values = [str(v) for (v,) in db.execute(sql, (where, where))]
        used = [r for r in records if not where or fold(_key(r, plan)) == where]
        shown = [_value(first_of[v], plan) for v in values]
        return done(", ".join(shown), shown, sql, used, f"{len(shown)} distinct {plan.value}")
    if op in ("count", "sum", "mean", "min", "max"):
        sql = _STATEMENTS[op]
        (result,) = db.execute(sql).fetchone()
        if result is None:
            return done("", None, sql, [], f"no {plan.value} to {op}")
        return done(_number(float(result)), result, sql, records, f"{op} over {len(records)} record(s)")
    if op in ("argmax", "argmin", "sort", "between"):
        if op == "sort":
            sql = _STATEMENTS["sort_desc" if plan.descending else "sort_asc"]
            ids = [i for (i,) in db.execute(sql)]
        elif op == "between":
            sql = _STATEMENTS["between"]
            ids = [i for (i,) in db.execute(sql, (plan.low, plan.high))]
        else:
            sql = _STATEMENTS[op]
            ids = [i for (i,) in db.execute(sql)]
        chosen = [records[i] for i in ids]
        names = [_key(r, plan) for r in chosen]
        return done(
            ", ".join(names), names, sql, chosen if op != "sort" else records, f"{op} by {plan.value}"
        )
    if op == "group":
        sql = _STATEMENTS["group"]
        groups: dict[str, list[str]] = {}
        for v, i in db.execute(sql):
            groups.setdefault(str(v), []).append(_key(records[i], plan))
        order = [fold(label) for label in plan.labels] or list(groups)
        order += [g for g in groups if g not in order]
        lines = [f"{plan.labels[n] if n < len(plan.labels) else g}: {', '.join(groups.get(g, []))}"
                 for n, g in enumerate(order)]  # fmt: skip
        grouped = {line.split(": ", 1)[0]: groups.get(g, []) for line, g in zip(lines, order, strict=True)}
        return done(
            "\n".join(lines), grouped, sql, records, f"{len(records)} record(s) grouped by {plan.value}"
        )
    if op == "top_k":
        sql = _STATEMENTS["top_k"]
        top = [(str(v), int(n)) for v, n in db.execute(sql, (plan.limit,))]
        shown = [_value(first_of[v], plan) for v, _ in top]
        counted = {v for v, _ in top}
        used = [r for r in records if fold(_value(r, plan)) in counted]
        why = ", ".join(f"{s} ({n})" for s, (_, n) in zip(shown, top, strict=True))
        return done(", ".join(shown), shown, sql, used, f"the {plan.limit} most frequent: {why}")
    if op in SETS:
        sql = _STATEMENTS[op]
        keys = [str(k) for (k,) in db.execute(sql)]
        labels = {fold(label) for label in plan.labels}
        kept = set(keys)
        used = [r for r in records if fold(_key(r, plan)) in kept and fold(_value(r, plan)) in labels]
        first_key: dict[str, Record] = {}
        for record in used:
            first_key.setdefault(fold(_key(record, plan)), record)
        names = [_key(first_key[k], plan) for k in keys]
        why = f"{len(names)} {plan.key}(s): {op} of {', '.join(plan.labels)}"
        return done(", ".join(names), names, sql, used, why)
    return _walk(plan, records, db, done)


Done = Callable[[str, Any, str, Sequence[Record], str], Computation]


def _walk(plan: RecordPlan, records: Sequence[Record], db: sqlite3.Connection, done: Done) -> Computation:
    """``chain``: from ``start`` along key → value; ``closure``: every key whose value leads to ``start``."""
    if plan.operation == "chain":
        sql = _STATEMENTS["follow"]
        path, used, at = [plan.start], [], fold(plan.start)
        seen = {at}
        for _ in range(len(records)):
            row = db.execute(sql, (at,)).fetchone()
            if row is None:
                break
            record = records[row[0]]
            used.append(record)
            at = fold(str(row[1]))
            if at in seen or db.execute(sql, (at,)).fetchone() is None:
                break  # a loop, or a link to outside what the records cover: the chain ends here
            seen.add(at)
            path.append(_value(record, plan))
        if not used:
            return done("", None, sql, [], f"no record starts at {plan.start!r}")
        return done(" -> ".join(path), path, sql, used, f"followed {len(used)} link(s)")
    sql = _STATEMENTS["holders"]
    frontier, found, used = [fold(plan.start)], [], []
    reached = set(frontier)
    while frontier:
        at = frontier.pop(0)
        for i, key in db.execute(sql, (at,)):
            if key not in reached:
                reached.add(key)
                frontier.append(key)
                found.append(_key(records[i], plan))
                used.append(records[i])
    if not found:
        return done("", None, sql, [], f"nothing holds {plan.start!r}")
    return done(", ".join(found), found, sql, used, f"{len(found)} hold {plan.start!r}")
