"""The courses' autograder, the GitHub Actions workflow ``routerlab course handout`` writes
(``data/course/grade.yml``): actionlint passes it; its steps grade every exercise of both
courses, each on the file a student edits; and its steps run, here, on a handout: its
shell and Python scripts as GitHub's runner runs them, with the course image's
``docker`` played by a stand-in that runs each command on this machine. actionlint is
installed by .ci/run (Go module proxy, pinned); without it the lint skips naming it, and
fails in CI (``$CI`` set)."""

import base64
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from conftest import ROOT, engine_marks, p4_check_engines
from routerlab.course import clickrouter, handout

WORKFLOW = handout.workflow()
#: The step options a grading step runs a check with: the student's file, per track.
FILE_OPTION = {"click": "--config", "p4": "--program"}


def actionlint() -> str:
    """actionlint: on PATH, or in Go's bin folder, where `go install` (and .ci/run) puts it.
    Missing: the test skips naming it, or fails in CI, where .ci/run installs it."""
    gobin = os.environ.get("GOBIN") or Path(os.environ.get("GOPATH", "~/go").split(":")[0]).expanduser() / "bin"
    found = shutil.which("actionlint") or shutil.which("actionlint", path=str(gobin))
    if found:
        return found
    why = ("actionlint not found (on PATH or in Go's bin folder): "
           "go install github.com/rhysd/actionlint/cmd/actionlint@v1.7.12, as .ci/run does")
    if os.environ.get("CI"):
        pytest.fail(f"{why} ($CI is set: in CI the lint must run)", pytrace=False)
    pytest.skip(why)


def lint(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([actionlint(), "-no-color", str(path)], capture_output=True, text=True)


@pytest.mark.parametrize("workflow", [WORKFLOW, *sorted((ROOT / ".github" / "workflows").glob("*.yml"))],
                         ids=lambda p: p.name)
def test_actionlint_passes_the_workflow(workflow):
    """The autograder's, and routerlab's own (the course image's publication)."""
    r = lint(workflow)
    assert r.returncode == 0, r.stdout + r.stderr


def test_actionlint_fails_a_broken_workflow(tmp_path):
    """The lint can fail: a step's condition naming a step the job does not have."""
    broken = tmp_path / "grade.yml"
    broken.write_text(WORKFLOW.read_text().replace("steps.image.outcome", "steps.imag.outcome", 1))
    r = lint(broken)
    assert r.returncode == 1 and "imag" in r.stdout, r.stdout + r.stderr


def graded(workflow: dict) -> dict[tuple[str, str], list[str]]:
    """The checks a workflow's steps run, (track, exercise) -> the rest of the command's
    words, from each step running `routerlab TRACK check EXERCISE ...`."""
    out = {}
    for step in workflow["jobs"]["grade"]["steps"]:
        if not re.search(r"\brouterlab \S+ check ", step.get("run", "")):
            continue
        words = shlex.split(step["run"])
        for i in range(len(words) - 2):
            if words[i] == "routerlab" and words[i + 2] == "check":
                key = (words[i + 1], words[i + 3])
                assert key not in out, f"{key} graded twice"
                out[key] = words[i + 4:]
    return out


def ungraded(workflow: dict) -> list[str]:
    """What is wrong with the workflow's grading: an exercise of the courses it does not
    check, or does not check on the student's file with JUnit output and its hidden
    checks' option; a check of no exercise."""
    steps = graded(workflow)
    wrong = [f"{t} {e}: no step checks it" for t, e in handout.exercises() if (t, e) not in steps]
    wrong += [f"{t} {e}: no such exercise" for t, e in steps if (t, e) not in handout.exercises()]
    for (track, exercise), words in steps.items():
        want = [FILE_OPTION[track], f"{track}/{handout.graded_file(track, exercise)}",
                f"${{EXTRA_{track}_{exercise}:+$EXTRA_{track}_{exercise}}}", "--format", "junit",
                ">", f"junit/{track}-{exercise}.xml"]
        if words != want:
            wrong.append(f"{track} {exercise}: runs {' '.join(words)!r}, not {' '.join(want)!r}")
    return wrong


def test_the_steps_grade_every_exercise_of_the_courses():
    assert ungraded(yaml.safe_load(WORKFLOW.read_text())) == []


def test_a_missing_or_wrong_step_is_found():
    workflow = yaml.safe_load(WORKFLOW.read_text())
    steps = workflow["jobs"]["grade"]["steps"]
    steps[:] = [s for s in steps if s.get("name") != "p4 gre"]
    firewall = next(s for s in steps if s.get("name") == "click firewall")
    firewall["run"] = firewall["run"].replace("click/firewall/firewall.click", "click/firewall/solution/firewall.click")
    assert ungraded(workflow) == [
        "p4 gre: no step checks it",
        "click firewall: runs '--config click/firewall/solution/firewall.click ${EXTRA_click_firewall:+$EXTRA_click_"
        "firewall} --format junit > junit/click-firewall.xml', not '--config click/firewall/firewall.click "
        "${EXTRA_click_firewall:+$EXTRA_click_firewall} --format junit > junit/click-firewall.xml'"]


def test_the_workflow_grades_in_this_releases_image_with_its_options():
    """The image the workflow starts is the one published for this routerlab's release, and
    it starts it with the options the checks need in a Docker container."""
    from routerlab.course import image
    from routerlab.testbed import userns

    env = yaml.safe_load(WORKFLOW.read_text())["env"]
    assert env["ROUTERLAB_IMAGE"] == image.published()
    words = env["ROUTERLAB_CONTAINER_OPTIONS"].split()
    pairs = sorted(zip(words[::2], words[1::2]))
    docker = userns.CONTAINER_OPTIONS["docker"]
    assert pairs == sorted(zip(docker[::2], docker[1::2]))


# -- the workflow run here ---------------------------------------------------------------------

#: ``docker`` for the emulated run: ``run`` notes the container's name, mounts and working
#: folder; ``exec`` runs the command on this machine, in the folder mounted as the working
#: folder, each container path of its arguments turned into the folder mounted there;
#: ``rm --force`` forgets the container.
FAKE_DOCKER = '''\
import json, os, sys
state = os.environ["FAKE_DOCKER_STATE"]
verb, *args = sys.argv[1:]
if verb == "run":
    mounts = {}
    for flag, value in zip(args, args[1:]):
        if flag == "--volume":
            src, dst = value.split(":")[:2]
            mounts[dst] = src
    name, workdir = args[args.index("--name") + 1], args[args.index("--workdir") + 1]
    with open(state, "w") as f:
        json.dump({"args": args, "name": name, "mounts": mounts, "workdir": workdir}, f)
    print("0123456789ab")
elif verb == "exec":
    with open(state) as f:
        run = json.load(f)
    if args[0] != run["name"]:
        sys.exit(f"docker: no container {args[0]!r}")
    def here(arg):
        for dst, src in run["mounts"].items():
            arg = arg.replace(dst + "/", src + "/")
        return arg
    os.chdir(here(run["workdir"] + "/"))
    os.execvp(args[1], [here(a) for a in args[1:]])
elif verb == "rm" and args[:1] == ["--force"]:
    # the container, if this stand-in "started" it, ends: no exec reaches it after
    if os.path.exists(state):
        with open(state) as f:
            run = json.load(f)
        if run["name"] == args[1]:
            with open(state, "w") as f:
                json.dump({**run, "name": None, "removed": args[1]}, f)
else:
    sys.exit(f"docker {verb}: not played by the stand-in")
'''


def run_workflow(workspace: Path, tmp: Path, secrets: dict, variables: dict, only=None) -> dict:
    """The workflow's job run here as GitHub's runner runs it: each ``run`` step (those
    ``only`` names, default all, whatever their ``if``) by its shell (bash with
    ``-eo pipefail``, or Python), in the workspace, with the workflow's and the step's
    environment (``secrets.X`` and ``vars.X`` from ``secrets`` and ``variables``) and what
    earlier steps wrote to ``$GITHUB_ENV``. The ``uses`` steps are GitHub's own: the
    checkout is the workspace, laid out by the caller, and the artifact is not uploaded.
    Returns each step's exit status, the summary written and the stand-in's record of
    ``docker run``."""
    workflow = yaml.safe_load(WORKFLOW.read_text())
    job = workflow["jobs"]["grade"]
    fake = tmp / "bin"
    fake.mkdir()
    (fake / "docker").write_text(f"#!{sys.executable}\n{FAKE_DOCKER}")
    (fake / "docker").chmod(0o755)
    (tmp / "runner-temp").mkdir()
    files = {"GITHUB_ENV": tmp / "github-env", "GITHUB_STEP_SUMMARY": tmp / "summary.md"}
    for f in files.values():
        f.write_text("")
    env = {**os.environ, **workflow["env"], **{k: str(v) for k, v in files.items()},
           "GITHUB_WORKSPACE": str(workspace), "RUNNER_TEMP": str(tmp / "runner-temp"),
           "FAKE_DOCKER_STATE": str(tmp / "docker.json"),
           # the stand-in first, then this routerlab, as the image has it on its PATH
           "PATH": f"{fake}:{Path(sys.executable).parent}:{os.environ['PATH']}"}
    contexts = {"secrets": secrets, "vars": variables}

    def value(text: str) -> str:
        def one(m):
            return contexts[m[1]].get(m[2], "")
        out = re.sub(r"\$\{\{\s*(secrets|vars)\.(\w+)\s*\}\}", one, str(text))
        assert "${{" not in out, f"an expression the emulated run does not know: {text}"
        return out

    status = {}
    for i, step in enumerate(job["steps"]):
        if "uses" in step or (only and step["name"] not in only):
            continue
        assert "${{" not in step["run"], f"{step['name']}: an expression in a script (use env)"
        script = tmp / f"step-{i}"
        script.write_text(step["run"])
        shell = step.get("shell", job["defaults"]["run"]["shell"])
        command = {"bash": ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                   "python": [sys.executable, str(script)]}[shell]
        written = dict(line.split("=", 1) for line in files["GITHUB_ENV"].read_text().splitlines() if line)
        step_env = {k: value(v) for k, v in step.get("env", {}).items()}
        status[step["name"]] = subprocess.run(command, cwd=workspace, env={**env, **written, **step_env}).returncode
    docker = json.loads((tmp / "docker.json").read_text()) if (tmp / "docker.json").is_file() else None
    return {"status": status, "summary": files["GITHUB_STEP_SUMMARY"].read_text(), "docker": docker,
            "env": files["GITHUB_ENV"].read_text()}


def packed(folder: Path) -> str:
    """A folder as the secret ROUTERLAB_HIDDEN_CHECKS holds it: `tar -czf - -C FOLDER . | base64 -w0`."""
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w:gz") as tar:
        tar.add(folder, arcname=".")
    return base64.b64encode(data.getvalue()).decode()


HIDDEN = {"click/forward.yaml": 'cases:\n  - {send: "udp 10.70.1.2 > 10.71.3.3", leaves: out, why: "any frame"}\n',
          "p4/router.yaml": 'cases:\n  - {send: "udp 10.70.1.2 > 10.71.0.77", leaves: out, why: "10.71.0.0/24"}\n'}


def hidden_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "hidden"
    for name, text in HIDDEN.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
        (folder / name).chmod(0o600)  # as an instructor's umask may leave them
    return folder


@pytest.mark.parametrize("given", ["secret", "variable"])
def test_the_hidden_checks_reach_their_exercises_checks(tmp_path, given):
    folder = hidden_folder(tmp_path)
    (tmp_path / "ws").mkdir()
    secrets = {"ROUTERLAB_HIDDEN_CHECKS": packed(folder)} if given == "secret" else {}
    variables = {"ROUTERLAB_HIDDEN_DIR": str(folder)} if given == "variable" else {}
    run = run_workflow(tmp_path / "ws", tmp_path, secrets, variables, only={"hidden checks"})
    assert run["status"] == {"hidden checks": 0}
    assert sorted(run["env"].splitlines()) == [
        "EXTRA_click_forward=--extra-checks=/hidden/click/forward.yaml",
        "EXTRA_p4_router=--extra-checks=/hidden/p4/router.yaml"]
    unpacked = tmp_path / "runner-temp" / "hidden" / "p4" / "router.yaml"
    assert unpacked.read_text() == HIDDEN["p4/router.yaml"] and unpacked.stat().st_mode & 0o004  # the image's user reads it


def test_without_hidden_checks_no_check_gets_any(tmp_path):
    (tmp_path / "ws").mkdir()
    run = run_workflow(tmp_path / "ws", tmp_path, {}, {}, only={"hidden checks"})
    assert run["status"] == {"hidden checks": 0} and run["env"] == ""


needs_click, _ = engine_marks("click", clickrouter.click_binary)
needs_p4, _ = engine_marks("bmv2's logging build and p4c", p4_check_engines)


@pytest.mark.slow
@needs_click
@needs_p4
def test_the_workflow_grades_a_handout(tmp_path):
    """A handout where the student solved click forward and p4 router and left the
    others as shipped, graded with hidden checks for those two: their steps pass, with
    the hidden cases among their results, every other step fails, and the summary lists
    every exercise in the order of the courses."""
    from routerlab.course.clickexercises import exercises_dir
    from routerlab.engines.p4 import p4_dir

    ws = tmp_path / "ws"
    handout.handout(ws)
    shutil.copyfile(exercises_dir() / "forward" / "solution" / "forward.click", ws / "click/forward/forward.click")
    shutil.copyfile(p4_dir() / "router" / "solution" / "router.p4", ws / "p4/router/router.p4")
    run = run_workflow(ws, tmp_path, {"ROUTERLAB_HIDDEN_CHECKS": packed(hidden_folder(tmp_path))}, {})

    assert run["docker"]["mounts"] == {"/course": str(ws), "/hidden": str(tmp_path / "runner-temp" / "hidden")}
    assert "seccomp=unconfined" in run["docker"]["args"] and "--detach" in run["docker"]["args"]
    assert run["docker"]["removed"] == "grader"  # the last step ends the container, whatever came before
    solved = {"click forward", "p4 router"}
    assert run["status"] == {"hidden checks": 0, "start the course image": 0, "summary": 0, "stop the course image": 0,
                             **{f"{t} {e}": 0 if f"{t} {e}" in solved else 1 for t, e in handout.exercises()}}
    for track, exercise in handout.exercises():
        suite = ET.parse(ws / "junit" / f"{track}-{exercise}.xml").getroot()
        assert suite.get("name") == f"routerlab.{track}.{exercise}"
        names = [c.get("name") for c in suite.iter("testcase")]
        assert any(n.startswith("extra: ") for n in names) == (f"{track}/{exercise}.yaml" in HIDDEN)
    rows = re.findall(r"^\| (\w+ \w+) \| (\d+) \| (\d+) \| (\d+) \| [\d.]+ \| (pass|fail) \|$", run["summary"], re.M)
    assert [r[0] for r in rows] == [f"{t} {e}" for t, e in handout.exercises()]
    assert {r[0] for r in rows if r[4] == "pass"} == solved and all(int(r[2]) == 0 for r in rows if r[0] in solved)
    folded = re.findall(r"^<details><summary>(\w+ \w+): (\d+) did not pass</summary>$", run["summary"], re.M)
    assert [f[0] for f in folded] == [r[0] for r in rows if r[0] not in solved]
    assert all(int(n) == int(r[2]) + int(r[3]) for (_, n), r in zip(folded, (r for r in rows if r[0] not in solved)))
