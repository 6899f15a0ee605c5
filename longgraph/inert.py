"""Untrusted text made inert before it reaches a terminal.

A document, a file name or a model's answer may hold terminal control sequences: ``ESC]0;title BEL``
retitles the window, ``ESC[2J`` clears the screen, others rewrite what was printed before, and the
Unicode direction overrides reorder a line so that it reads differently from what it holds. The CLI
prints every such text through :func:`for_terminal`: each control character is shown as a visible
escape (``\\x1b``), so the user sees that it was there and the terminal does nothing.
"""

from __future__ import annotations

import re

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""C0 controls but tab and newline, DEL, C1 controls (8-bit CSI and OSC among them), and the bidirectional
marks and overrides."""


def _shown(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def for_terminal(text: str) -> str:
    """``text`` with every control character shown as an escape instead of acted on."""
    return _UNSAFE.sub(_shown, text)


def json_for_terminal(dumped: str) -> str:
    """JSON text (``ensure_ascii=False``) safe to print: JSON escapes C0 itself; C1 and the direction
    marks, valid unescaped in JSON strings, are written as ``\\u`` escapes of four hex digits (the same JSON)."""
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", dumped)
