#!/usr/bin/env python3
"""pty_session.py -- drive an interactive `mariadb` client through a
pseudo-terminal, as a person at a terminal would, and print what it showed.

Usage: pty_session.py SCRIPT -- mariadb ARGS...

Each line of SCRIPT is typed at the client's prompt, then the output up to
the next prompt is collected.  What differs between two servers by nature
is normalised so two transcripts can be compared: the banner before the
first prompt is dropped, the prompt becomes `SQL [db]>` (the client names
the server's kind and the schema in it), timings
become (T sec).  Exits non-zero if the client does not come back to its
prompt within 20 s.
"""
import os
import pty
import re
import select
import sys
import time

PROMPT = re.compile(rb"(MariaDB|MySQL) \[[^\]]*\]> $")


def read_until_prompt(fd, timeout=20.0):
    out = b""
    end = time.time() + timeout
    while not PROMPT.search(out):
        left = end - time.time()
        if left <= 0:
            raise SystemExit("pty_session: no prompt; got %r" % out[-300:])
        r, _, _ = select.select([fd], [], [], left)
        if r:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                raise SystemExit("pty_session: the client exited; got %r" % out[-300:])
            out += chunk
    return out


def normalise(text):
    text = re.sub(r"\(\d+\.\d+ sec\)", "(T sec)", text)
    return text


def main():
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        raise SystemExit(__doc__)
    with open(sys.argv[1], encoding="utf-8") as f:
        lines = [l.rstrip("\n") for l in f if l.strip()]
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["TERM"] = "dumb"
        os.execvp(sys.argv[3], sys.argv[3:])
    read_until_prompt(fd)  # the banner: server version and id differ
    transcript = []
    for line in lines:
        os.write(fd, line.encode() + b"\n")
        reply = read_until_prompt(fd).decode("utf-8", "replace").replace("\r\n", "\n")
        # the terminal's echo of the line, and the next prompt, are not the
        # server's answer
        body = [l for l in reply.split("\n")[:-1] if l.rstrip() != line.rstrip()]
        transcript.append("> %s\n%s\n" % (line, "\n".join(body)))
    os.write(fd, b"quit\n")
    os.waitpid(pid, 0)
    sys.stdout.write(normalise("".join(transcript)))


if __name__ == "__main__":
    main()
