"""Every page says which scripts may run: only Quorum's own files (quorum/settings.py,
CONTENT_SECURITY_POLICY). Crowd workers' text reaches organizers who pay and reject them; were a page
ever to render some of it as markup, the browser would still run none of it. The browser tests fail
on any refusal Chromium reports (tests/browser/conftest.py), so a page that needs an inline script
shows up there too."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE_DIRS = [ROOT / "templates", *(ROOT / app / "templates" for app in ("annotation", "hits", "evaluation"))]


def policy_of(response) -> dict[str, list[str]]:
    header = response["Content-Security-Policy"]
    return {name: values.split() for name, _, values in (part.strip().partition(" ") for part in header.split(";"))}


@pytest.mark.django_db
def test_an_organizer_page_runs_only_quorums_own_scripts_and_is_framed_by_no_one(client, organizer):
    client.force_login(organizer)
    response = client.get("/organize/")
    assert response.status_code == 200
    policy = policy_of(response)
    assert policy["script-src"] == ["'self'"]  # no inline script, no eval, no other site
    assert policy["object-src"] == ["'none'"] and policy["base-uri"] == ["'self'"]
    assert policy["frame-ancestors"] == ["'none'"]
    assert policy["media-src"] == ["'self'", "blob:"]


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/accounts/login/", "/api/docs/", "/api/jobs/"])
def test_the_login_the_api_docs_and_the_api_carry_the_same_policy(client, path):
    response = client.get(path)
    assert response.status_code in (200, 401, 403)
    assert policy_of(response)["script-src"] == ["'self'"]


@pytest.mark.django_db
def test_the_api_docs_load_their_script_from_a_file(client):
    """Swagger UI's set-up script is served at its own address (drf-spectacular's split view), not
    inline, so the docs work under the policy."""
    page = client.get("/api/docs/").content.decode()
    sources = re.findall(r'<script src="([^"]+)"', page)
    assert any("script" in src for src in sources) and "<script>" not in page
    script = client.get(next(src for src in sources if src.startswith("/api/docs/")))
    assert script.status_code == 200 and "SwaggerUIBundle" in script.content.decode()


def test_no_template_of_quorum_carries_an_inline_script():
    inline = []
    for folder in TEMPLATE_DIRS:
        for template in folder.rglob("*.html"):
            for tag in re.findall(r"<script\b[^>]*>", template.read_text()):
                if "src=" not in tag and 'type="application/json"' not in tag:
                    inline.append(f"{template.relative_to(ROOT)}: {tag}")
    assert not inline, "put the script in static/ and load it with <script src>: " + "; ".join(inline)
    assert len(list(TEMPLATE_DIRS[1].rglob("*.html"))) > 20  # the scan reads the real templates
