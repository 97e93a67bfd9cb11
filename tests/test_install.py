"""routerlab outside a clone, as Colab, a pip user and a course's JupyterLab get it: the
wheel carries the project's folders, every notebook replays from an empty folder in a
fresh virtual environment, and JupyterLab serves and runs the notebooks."""

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
import zipfile
from pathlib import Path

import pytest
from conftest import MOONROUTE_COPY, ROOT, SAMPLE

from routerlab.publish import notebooks
from routerlab.analysis.datasets import BUNDLED
from routerlab.errors import NeedsRoot


def tracked(folder: str) -> list[str]:
    """The files of ``folder`` that the commit has (git), else every file in it."""
    if shutil.which("git") and (ROOT / ".git").exists():
        out = subprocess.run(["git", "ls-files", "-z", folder], cwd=ROOT, capture_output=True, text=True).stdout
        return [f for f in out.split("\0") if f and (ROOT / f).is_file()]
    return [str(p.relative_to(ROOT)) for p in (ROOT / folder).rglob("*") if p.is_file()]


def test_the_wheel_carries_datasets_notebooks_routers_and_p4(wheel):
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        for folder in BUNDLED:
            files = tracked(folder)
            assert files, folder
            for f in files:
                inside = f"routerlab/_bundle/{f}"
                assert inside in names, f"{f} is not in the wheel"
                assert z.read(inside) == (ROOT / f).read_bytes(), f"{f} differs in the wheel"
        assert not [n for n in names if "/build/" in n or "__pycache__" in n]
        assert "routerlab/data/engine-builds.yaml" in names


def test_measure_mode_without_root_stops_with_one_sentence(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(NeedsRoot) as e:
        notebooks.check_mode("measure")
    assert str(e.value).count(".") <= 1 and "mode='replay'" in str(e.value)
    assert notebooks.check_mode("replay") == "replay"
    assert notebooks.check_mode("measure", needs_testbed=False) == "measure"


def test_every_notebook_links_to_colab_and_the_readme_too():
    readme = (ROOT / "README.md").read_text()
    for nb in notebooks.list_notebooks():
        first_md = next(c for c in json.loads(nb.read_text())["cells"] if c["cell_type"] == "markdown")
        assert "".join(first_md["source"]).startswith(notebooks.colab_badge(nb.stem))
        assert notebooks.colab_url(nb.stem) in readme, f"README's table has no Colab link for {nb.stem}"


@pytest.mark.slow
def test_colab_user_replays_every_notebook_from_an_empty_folder(wheel, tmp_path):
    """A fresh venv, routerlab from the wheel (not editable), each notebook run on its own
    from an empty folder, then `routerlab figures` there."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    # nothing of the caller's environment: with a clone's lib/ on PYTHONPATH (and the
    # routerlab.egg-info the wheel's build leaves there), pip would take routerlab for installed
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ROUTERLAB_", "VIRTUAL_ENV", "PYTHON"))}
    # the pinned downloads a Colab user's notebook makes, from the copies beside the clone
    # (this machine reaches no GitHub)
    if not MOONROUTE_COPY.is_file():
        pytest.skip(f"the MoonRoute authors' files not found at {MOONROUTE_COPY}")
    env.update(PATH=f"{venv / 'bin'}:{env['PATH']}", ROUTERLAB_PASTRAMI_DIR=str(SAMPLE),
               ROUTERLAB_MOONROUTE_DIR=str(MOONROUTE_COPY))
    p = subprocess.run([str(py), "-m", "pip", "install", "-q", str(wheel)], env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-3000:]
    work = tmp_path / "empty"
    work.mkdir()
    if not (SAMPLE / "verdicts.tsv").is_file():
        pytest.skip(f"PASTRAMI sample not found at {SAMPLE} (set ROUTERLAB_PASTRAMI_SAMPLE)")
    # the installed package, not the clone, answers
    where = subprocess.run([str(py), "-c", "import routerlab.publish.notebooks as n; print(n.notebooks_dir())"],
                           cwd=work, env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert str(venv) in where and str(ROOT) not in where
    subprocess.run([str(venv / "bin" / "routerlab"), "notebooks", "copy", "nb"], cwd=work, env=env, check=True,
                   capture_output=True)
    books = sorted((work / "nb").glob("*.ipynb"))
    assert len(books) == len(notebooks.list_notebooks())
    times = {}
    for nb in books:
        t = time.monotonic()
        r = subprocess.run([str(py), "-m", "papermill", str(nb), str(work / f"{nb.stem}.out.ipynb"), "-p", "mode",
                            "replay", "--cwd", str(work), "--no-progress-bar"],
                           cwd=work, env=env, capture_output=True, text=True)
        times[nb.stem] = time.monotonic() - t
        assert r.returncode == 0, f"{nb.stem}:\n{r.stderr[-3000:]}"
    print("colab simulation, seconds per notebook:", {k: round(v, 1) for k, v in times.items()})
    r = subprocess.run([str(venv / "bin" / "routerlab"), "figures", "--only", "pastrami-methodology"], cwd=work,
                       env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "Kernel is running over TCP" not in r.stdout + r.stderr
    assert list((work / "figures" / "pastrami-methodology").glob("*.png"))
    # the bundled datasets' READMEs are what their files give, checked from the install
    r = subprocess.run([str(venv / "bin" / "routerlab"), "report", "--check"], cwd=work, env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0 and str(venv) in r.stdout and "differs" not in r.stdout, r.stdout[-3000:] + r.stderr
    site = subprocess.run([str(py), "-c", "import routerlab, pathlib; print(pathlib.Path(routerlab.__file__).parent)"],
                          env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert not list(Path(site).rglob("runs")), "a notebook wrote into the installed package"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def jupyter_lab(tmp_path):
    """JupyterLab serving the clone, on loopback, with a token."""
    if not shutil.which("jupyter", path=str(Path(sys.executable).parent)):
        pytest.skip("JupyterLab is not installed (scripts/setup.sh installs the lab extra)")
    port, token = _free_port(), uuid.uuid4().hex
    proc = subprocess.Popen([str(Path(sys.executable).parent / "jupyter"), "lab", "--no-browser", "--allow-root",
                             f"--ServerApp.port={port}", "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={token}",
                             f"--ServerApp.root_dir={ROOT}", "--ServerApp.port_retries=0"],
                            stdout=subprocess.DEVNULL, stderr=open(tmp_path / "lab.log", "w"),
                            env={**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path / "rt")})
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
                break
            except OSError:
                assert proc.poll() is None, (tmp_path / "lab.log").read_text()[-2000:]
                time.sleep(0.5)
        yield base, token
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def _get(url: str):
    with urllib.request.urlopen(url, timeout=30) as r:
        return json.load(r)


def test_jupyter_lab_serves_and_runs_a_notebook(jupyter_lab):
    import asyncio

    from tornado.websocket import websocket_connect

    base, token = jupyter_lab
    listing = _get(f"{base}/api/contents/notebooks?token={token}")
    names = sorted(c["name"] for c in listing["content"])
    assert names == sorted(p.name for p in notebooks.list_notebooks())
    nb = _get(f"{base}/api/contents/notebooks/pastrami-methodology.ipynb?token={token}")
    assert nb["type"] == "notebook" and nb["content"]["cells"]
    req = urllib.request.Request(f"{base}/api/kernels?token={token}", data=b'{"name": "python3"}', method="POST",
                                 headers={"Content-Type": "application/json"})
    kernel = json.load(urllib.request.urlopen(req, timeout=60))
    code = [c["source"] for c in nb["content"]["cells"] if c["cell_type"] == "code"]

    async def run_all():
        ws = await websocket_connect(f"{base.replace('http', 'ws')}/api/kernels/{kernel['id']}/channels?token={token}")
        await asyncio.sleep(0)
        for src in ["import os; os.chdir('notebooks')", *code]:
            msg_id = uuid.uuid4().hex
            await ws.write_message(json.dumps({
                "header": {"msg_id": msg_id, "msg_type": "execute_request", "username": "test", "session": "s",
                           "version": "5.3"},
                "parent_header": {}, "metadata": {}, "channel": "shell",
                "content": {"code": src, "silent": False, "store_history": False, "user_expressions": {},
                            "allow_stdin": False, "stop_on_error": True}}))
            while True:
                m = json.loads(await asyncio.wait_for(ws.read_message(), 300))
                if m["parent_header"].get("msg_id") == msg_id and m["msg_type"] == "execute_reply":
                    assert m["content"]["status"] == "ok", (src[:200], m["content"].get("evalue"))
                    break
        ws.close()

    asyncio.run(run_all())
