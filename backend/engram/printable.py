"""Text from outside (file names, titles, note text, request paths) made safe for a terminal or
a log: control characters become visible escapes instead of acting.

A file named `\\x1b]0;evil\\x07.md` must not retitle the terminal that lists it, and a request
for `/v1/x%0A...` must not forge a second line in the access log. Escapes look like Python's
(`\\x1b`, `\\u202e`); backslashes are left alone, so escaping twice changes nothing.
"""

from __future__ import annotations

import logging
import re

# C1 controls, DEL, the bidi controls that reorder what a reader sees (a name that displays as
# "txt.exe" but is not), and lone surrogates (undecodable bytes of a file name, which no
# terminal or log file can encode); with the C0 controls, all of them are escaped.
_OTHERS = "\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_ONE_LINE = re.compile(f"[\x00-\x1f{_OTHERS}]")
# multi-line text keeps its tabs and line breaks (a CR only as part of CRLF)
_MULTI_LINE = re.compile(f"\r(?!\n)|[\x00-\x08\x0b\x0c\x0e-\x1f{_OTHERS}]")
_JSON_RAW = re.compile(f"[{_OTHERS}]")  # json.dumps(ensure_ascii=False) escapes only C0


_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    return _NAMED.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def printable(text: str, *, multiline: bool = False) -> str:
    """`text` with control characters escaped; `multiline` keeps newlines and tabs."""
    return (_MULTI_LINE if multiline else _ONE_LINE).sub(_escape, text)


def json_safe(text: str) -> str:
    """JSON text (from `json.dumps(..., ensure_ascii=False)`) with the characters `printable`
    escapes written as JSON escapes: the same value for a parser, inert on a terminal."""
    return _JSON_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


class PrintableFormatter(logging.Formatter):
    """Log records that keep to their lines: the message escaped, a traceback indented, so
    nothing a client sent can start a line that looks like a record of its own."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        """The record's line, its message escaped."""
        record.message = printable(record.message)
        return super().formatMessage(record)

    def formatException(self, ei: logging._SysExcInfoType) -> str:
        """The traceback, escaped and indented under its record."""
        return _indented(super().formatException(ei))

    def formatStack(self, stack_info: str) -> str:
        """The stack, escaped and indented under its record."""
        return _indented(super().formatStack(stack_info))


def _indented(text: str) -> str:
    return "    " + printable(text, multiline=True).replace("\n", "\n    ")
