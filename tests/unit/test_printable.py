"""Text from outside made safe for terminals and logs."""

from __future__ import annotations

import logging
import sys

import pytest

from engram.printable import PrintableFormatter, printable

CASES = [
    ("plain café 東京 😀", "plain café 東京 😀", "plain café 東京 😀"),
    ("\x1b]0;evil\x07", "\\x1b]0;evil\\x07", "\\x1b]0;evil\\x07"),  # retitles a terminal
    ("\x1b[31mred", "\\x1b[31mred", "\\x1b[31mred"),
    ("a\nb\tc", "a\\nb\\tc", "a\nb\tc"),
    ("crlf\r\nlone\rcr", "crlf\\r\\nlone\\rcr", "crlf\r\nlone\\rcr"),
    ("\x00\x7f\x9b", "\\x00\\x7f\\x9b", "\\x00\\x7f\\x9b"),  # NUL, DEL, 8-bit CSI
    ("txt\u202eexe.md", "txt\\u202eexe.md", "txt\\u202eexe.md"),  # bidi override
    ("bad\udcffbyte", "bad\\udcffbyte", "bad\\udcffbyte"),  # undecodable byte of a name
    ("a\\x1b", "a\\x1b", "a\\x1b"),  # escaping twice changes nothing
    ("zwj 👩\u200d💻", "zwj 👩\u200d💻", "zwj 👩\u200d💻"),  # emoji joiners stay
]


@pytest.mark.parametrize(("text", "one_line", "multi_line"), CASES)
def test_printable(text: str, one_line: str, multi_line: str) -> None:
    assert printable(text) == one_line
    assert printable(text, multiline=True) == multi_line
    assert printable(one_line) == one_line


def test_log_records_keep_to_their_lines() -> None:
    formatter = PrintableFormatter("%(levelname)s %(message)s")
    record = logging.LogRecord(
        "x", logging.INFO, __file__, 1, "GET %s", ("/v1/x\nINFO forged\x1b[2J",), None
    )
    assert formatter.format(record) == "INFO GET /v1/x\\nINFO forged\\x1b[2J"
    try:
        raise ValueError("bad\nERROR forged\x07")
    except ValueError:
        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "boom", (), sys.exc_info())
    lines = formatter.format(record).splitlines()
    assert lines[0] == "ERROR boom"
    assert all(line.startswith("    ") for line in lines[1:])
    assert lines[-2:] == ["    ValueError: bad", "    ERROR forged\\x07"]
