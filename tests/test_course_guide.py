"""The instructor's guide as written (docs/course.md, "Setting up a student's machine"),
followed on a fresh Debian 12 machine: a container of the base image made from Debian's
packages, where the administrator runs the guide's root blocks and a new user without
root, sudo or a terminal runs the student's blocks, line by line, to a passing check.

The guide marks each block with who runs it (``<!-- as: root -->``, ``<!-- as: student
-->``, ``<!-- as: instructor -->``). What this machine adds is only what it lacks as a
place to try things: GitHub, which it cannot reach (git is pointed at this clone's
committed tree instead), the certificates its pip trusts, and the instructor's bundle,
put where the guide's ``BUNDLE=`` line says. It takes minutes: the guide's set-up
installs Debian packages and two virtual environments from the registries."""

from __future__ import annotations

import re
import shlex
import subprocess

from conftest import ROOT, engine_absent, podman_or_skip
from routerlab.course import image
from routerlab.engines import builds

GUIDE = ROOT / "docs/course.md"
#: The route the trial takes: the one the guide recommends.
ROUTE = "### The instructor's bundle"


def blocks(text: str, heading: str) -> list[tuple[str, list[str]]]:
    """The marked ``bash`` blocks from ``heading`` to the next section of the same or a
    higher level and those under "Then, whichever the route": (who, command lines), in order; a line's comment is
    left to the shell."""
    out = []
    for start in (heading, "### Then, whichever the route"):
        i = text.index(start)
        j = text.find("\n## ", i + 1)
        k = text.find("\n### ", i + 1)
        part = text[i:min(x for x in (j, k, len(text)) if x > 0)]
        for who, body in re.findall(r"<!-- as: (\w+) -->\s*```bash\n(.*?)```", part, re.S):
            out.append((who, [x for x in body.splitlines() if x.strip()]))
    return out


def test_the_route_has_blocks_for_each_of_its_people():
    """The guide's recommended route says who runs each block, and its student's part
    ends in a check, of the solution, that must pass."""
    got = blocks(GUIDE.read_text(), ROUTE)
    assert [w for w, _ in got][:3] == ["instructor", "root", "student"], got
    student = [line for w, lines in got if w == "student" for line in lines]
    assert any(re.search(r"routerlab (click|p4) check \w+ --solution", x) for x in student), student


def _or_skip():
    podman_or_skip("the guide's trial")
    try:
        return image.packed(lambda line: None)
    except Exception as e:  # noqa: BLE001
        engine_absent(f"the instructor's bundle cannot be packed here: {e}")


def _script(lines: list[str]) -> str:
    """A person's lines as one shell session runs them, in order (a variable or a ``cd``
    carries to the next line): each must exit 0, but a check of a skeleton, which fails
    by design, may exit 1; the first other status ends the session with it."""
    out = ["set -u"]
    for line in lines:
        ok = "0" if "--solution" in line or " check " not in line else "0|1"
        out.append(f"echo {shlex.quote('>>> ' + line)}")
        out.append(f"{line}\nrc=$?; case $rc in {ok}) ;; *) echo \"exit $rc\"; exit $rc;; esac")
    return "\n".join(out) + "\n"


def test_a_new_user_on_fresh_debian_follows_the_guide_to_a_passing_check(tmp_path):
    bundle = _or_skip()
    image.base(lambda line: None)
    text = GUIDE.read_text()
    sha = builds.sha256(bundle)
    where = "/srv/course/routerlab-engines.tar.gz"
    repo = re.search(r"git clone (https://github\.com/\S+)", text)[1]
    people: dict[str, list[str]] = {"root": [], "student": []}
    for who, lines in blocks(text, ROUTE):
        for line in lines:
            line = re.sub(r"^BUNDLE=\S+", f"BUNDLE={where}", line)
            people.get(who, []).append(re.sub(r"^HASH=\S+", f"HASH={sha}", line))
    for who, lines in people.items():
        (tmp_path / f"{who}.sh").write_text(_script(lines))
    # the committed tree, as GitHub would serve it
    subprocess.run(["git", "clone", "--quiet", "--bare", str(ROOT), str(tmp_path / "routerlab.git")], check=True)
    machine = "\n".join([
        "set -eu",
        "useradd --create-home --shell /bin/bash student",
        # this machine's stand-ins for what it cannot reach or does not trust by default
        f"printf '[url \"file:///srv/routerlab.git\"]\\n\\tinsteadOf = {repo}\\n[safe]\\n\\tdirectory = *\\n'"
        " > /etc/gitconfig",
        "printf '[global]\\ncert = /srv/ca.crt\\n' > /etc/pip.conf",
        "set +e",
        "(cd /root && bash /srv/root.sh) || exit $?",
        # a login shell of the student's, no terminal, no sudo (none is installed)
        "runuser -l student -c 'bash /srv/student.sh' < /dev/null",
    ])
    (tmp_path / "trial.sh").write_text(machine + "\n")
    cmd = image.podman() + ["run", "--rm", "--network", "host", *image.limits(), *image.run_options(),
                            "--volume", f"{tmp_path / 'routerlab.git'}:/srv/routerlab.git:ro",
                            "--volume", f"{bundle}:{where}:ro",
                            "--volume", f"{image._pip_certificates()}:/srv/ca.crt:ro",
                            *(x for f in ("trial.sh", "root.sh", "student.sh")
                              for x in ("--volume", f"{tmp_path / f}:/srv/{f}:ro")),
                            image.BASE, "bash", "/srv/trial.sh"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    assert p.returncode == 0, p.stdout[-6000:] + p.stderr[-3000:]
    assert re.search(r"expectations pass\. Every TODO passes", p.stdout), p.stdout[-3000:]
