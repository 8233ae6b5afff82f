"""wild as a user installs it (`pip install wild`): the wheel, built from the sdist, works in
a fresh venv from an empty folder, with everything it reads at run time inside the package."""

from __future__ import annotations

import http.cookiejar
import re
import subprocess
import tarfile
import urllib.request
import zipfile
from pathlib import Path

from tests.installed_wheel import ROOT, Installed
from wild import __version__
from wild.paths import CHECK_SCRIPTS_DIR, DEMO_STORY_DIR, STORY_KIT_DIR, TEMPLATES_DIR, shipped

# What only the tests use never ships: test doubles, fixtures, the test modules themselves.
TEST_ONLY = re.compile(r"(^|/)(tests?|conftest\.py|fake_\w+\.py|test_\w+\.py|fixtures)(/|$)")


def _names(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def test_the_wheel_ships_the_top_level_folders_and_nothing_test_only(
    installed_wild: Installed,
) -> None:
    names = set(zipfile.ZipFile(installed_wild.wheel).namelist())
    expected = {f"wild/shipped/templates/.wild/{n}" for n in _names(ROOT / "templates" / ".wild")}
    assert len(expected) == 6
    expected |= {
        f"wild/shipped/check_barriers/{n}" for n in _names(ROOT / "scripts/check_barriers")
    }
    expected |= {f"wild/shipped/examples/rl-training/{n}" for n in _names(DEMO_STORY_DIR)}
    kit = {n for n in _names(STORY_KIT_DIR) if "__pycache__" not in n}
    expected |= {f"wild/shipped/examples/wild_stories/{n}" for n in kit}
    expected |= {f"wild/serve/static/{n}" for n in _names(ROOT / "wild" / "serve" / "static")}
    expected |= {f"wild/prompt_templates/{n}" for n in _names(ROOT / "wild" / "prompt_templates")}
    assert expected <= names, sorted(expected - names)
    assert sorted(n for n in names if TEST_ONLY.search(n)) == []
    # Story code (the scripted story agent, the analyses) ships only as the demo's data, never
    # as a module of the `wild` package.
    modules = [n for n in names if n.endswith(".py") and not n.startswith("wild/shipped/")]
    assert [n for n in modules if re.search(r"(^|/)(stories|wild_stories)/", n)] == []
    # The sdist carries the top-level sources the wheel was built from.
    with tarfile.open(installed_wild.sdist) as sdist:
        inside = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    assert {"setup.py", "MANIFEST.in", "templates/.wild/tasks.md"} <= inside
    assert "scripts/check_barriers/files_exist.py" in inside
    assert "examples/rl-training/story.md" in inside


def test_a_checkout_reads_the_shipped_folders_in_place_and_a_wheel_from_its_package() -> None:
    assert TEMPLATES_DIR == ROOT / "templates" / ".wild"
    assert CHECK_SCRIPTS_DIR == ROOT / "scripts" / "check_barriers"
    assert DEMO_STORY_DIR == ROOT / "examples" / "rl-training"
    assert STORY_KIT_DIR == ROOT / "examples" / "wild_stories"
    assert shipped("nowhere", "templates/.wild") == ROOT / "nowhere"


def test_init_status_version_and_the_check_scripts_work_from_the_wheel(
    installed_wild: Installed, tmp_path: Path
) -> None:
    probe = subprocess.run(
        [str(installed_wild.python), "-c", "import wild; print(wild.__file__)"],
        cwd=tmp_path,
        env=installed_wild.env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert not Path(probe.stdout.strip()).is_relative_to(ROOT)  # the wheel's copy
    version = installed_wild.wild("--version", cwd=tmp_path)
    assert (version.returncode, version.stdout) == (0, f"wild {__version__}\n")
    init = installed_wild.wild("--init", cwd=tmp_path)
    assert init.returncode == 0, init.stderr
    assert (tmp_path / ".wild" / "human-policy.md").read_text().startswith("# Human Policy")
    status = installed_wild.wild("--status", cwd=tmp_path)
    assert status.returncode == 0, status.stderr
    assert "Policy: semi-autonomous" in status.stdout
    with (tmp_path / ".wild" / "barriers.md").open("a") as barriers:
        barriers.write(
            "\n## [WAITING] barrier-data\n- Type: command-check\n"
            '- Check: "$WILD_CHECKS/files_exist.py" ".wild/*.md" 3\n'
        )
    generated = installed_wild.wild("--generate-check", "barrier-data", cwd=tmp_path)
    assert generated.returncode == 0, generated.stderr
    script = tmp_path / "scripts" / "check_barriers" / "barrier-data.sh"
    ran = subprocess.run(
        [str(script)],
        cwd=tmp_path,
        env=installed_wild.env,
        capture_output=True,
        text=True,
        check=False,
    )
    # The shipped check script ran from the installed package, not from a checkout.
    assert (ran.returncode, ran.stdout) == (0, "5 match '.wild/*.md' (need 3)\n"), ran.stderr
    assert str(ROOT) not in script.read_text()


def test_the_dashboard_serves_its_page_from_the_wheel(
    installed_wild: Installed, tmp_path: Path
) -> None:
    assert installed_wild.wild("--init", cwd=tmp_path).returncode == 0
    server = subprocess.Popen(
        [str(installed_wild.python), "-m", "wild", "--serve", "--port", "0"],
        cwd=tmp_path,
        env=installed_wild.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/\S*", line)
        assert url is not None, line + server.stderr.read() if server.stderr else line
        opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
        )
        with opener.open(url.group(0), timeout=10) as page:
            html = page.read().decode()
            assert page.status == 200
        assert "<title>" in html and "wild" in html
        script = re.search(r'src="(/static/[^"]+\.js)"', html)
        assert script is not None
        base = url.group(0).split("/?", 1)[0]
        with opener.open(base + script.group(1), timeout=10) as static:
            assert static.status == 200 and len(static.read()) > 1000
    finally:
        server.terminate()
        server.wait(timeout=10)
