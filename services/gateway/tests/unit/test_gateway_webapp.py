"""The web app at ``/``: its files, the index for its routes, and nothing else changed.

The app under test is a small FastAPI app with the platform's problem handlers, a few API
routes and FastAPI's docs, with and without the web app mounted after them: wherever the web
app must not answer (another method, the API, the docs, health, metrics) both answer alike.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpux_gateway.webapp import (
    IMMUTABLE,
    POLICY,
    REVALIDATE,
    is_reserved,
    looks_like_file,
    mount,
    resolve,
)
from gpux_platform.problems import PROBLEM_MEDIA_TYPE, install_problem_handlers

pytestmark = pytest.mark.unit

INDEX = '<!doctype html><html lang="en"><title>gpux</title><div id="app"></div></html>'
BUNDLE = "console.log('gpux');"


def api_app() -> FastAPI:
    """Routes like the gateway's: an API read and write, health, metrics; docs by FastAPI."""
    app = FastAPI()
    install_problem_handlers(app)

    @app.get("/v1/gpus")
    async def gpus() -> dict[str, list[str]]:
        return {"items": []}

    @app.post("/v1/orders", status_code=202)
    async def orders() -> dict[str, str]:
        return {"status": "pending_funds"}

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/metrics", include_in_schema=False)
    async def metrics() -> str:
        return "up 1"

    return app


def build(dist: Path) -> None:
    (dist / "assets").mkdir(parents=True)
    (dist / "index.html").write_text(INDEX)
    (dist / "assets" / "index-3f2a9c.js").write_text(BUNDLE)
    (dist / "favicon.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'/>")


@pytest.fixture
def dist(tmp_path: Path) -> Path:
    built = tmp_path / "dist"
    build(built)
    return built


@pytest.fixture
def client(dist: Path) -> Iterator[TestClient]:
    app = api_app()
    mount(app, dist)
    with TestClient(app) as test_client:
        yield test_client


def test_the_root_and_every_route_of_the_app_answer_its_index_with_its_policy(
    client: TestClient,
) -> None:
    for path in (
        "/",
        "/guide",
        "/guide/",
        "/gpus/rtx-4090",
        "/gpus/h100-sxm?tier=interruptible",
        "/console",
        "/console/",
        "/console/orders",
        "/console/leases",
        "/console/statement",
        "/console/keys/",
        "/seller",
        "/seller/offers",
        "/index.html",
    ):
        response = client.get(path)
        assert response.status_code == 200, path
        assert response.text == INDEX
        assert response.headers["content-type"].startswith("text/html")
        assert response.headers["content-security-policy"] == POLICY
        assert response.headers["cache-control"] == REVALIDATE
    assert client.head("/gpus/rtx-4090").status_code == 200


def test_hashed_assets_are_cached_for_good_and_other_files_revalidated(
    client: TestClient,
) -> None:
    bundle = client.get("/assets/index-3f2a9c.js")
    assert bundle.status_code == 200
    assert bundle.text == BUNDLE
    assert "javascript" in bundle.headers["content-type"]
    assert bundle.headers["cache-control"] == IMMUTABLE
    assert bundle.headers["x-content-type-options"] == "nosniff"
    icon = client.get("/favicon.svg")
    assert icon.headers["content-type"].startswith("image/svg+xml")
    assert icon.headers["cache-control"] == REVALIDATE


def test_a_path_that_is_no_page_of_the_app_is_a_404_problem_but_a_browser_gets_the_app(
    client: TestClient,
) -> None:
    for path in (
        "/no-such-thing",
        "/gpus",
        "/gpus/a/b",
        "/orders",
        "/guides",
        "/guide/x",
        "/console/wallet",
        "/console/orders/x",
        "/consoles",
        "/seller/leases",
    ):
        response = client.get(path)
        assert response.status_code == 404, path
        assert response.headers["content-type"] == PROBLEM_MEDIA_TYPE, path
        # A browser's navigation: the app draws its own "page not found".
        page = client.get(path, headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"})
        assert page.status_code == 200, path
        assert page.text == INDEX, path
    asset = client.get("/assets/index-old.js", headers={"Accept": "text/html"})
    assert asset.status_code == 404


def test_a_missing_asset_is_a_404_problem_not_the_index(client: TestClient) -> None:
    response = client.get("/assets/index-old.js")
    assert response.status_code == 404
    assert response.headers["content-type"] == PROBLEM_MEDIA_TYPE
    assert response.json()["instance"] == "/assets/index-old.js"


def test_the_api_and_the_docs_answer_as_before(client: TestClient) -> None:
    assert client.get("/v1/gpus").json() == {"items": []}
    assert client.post("/v1/orders").status_code == 202
    assert client.get("/healthz").json() == {"status": "ok"}
    assert client.get("/docs").headers["content-type"].startswith("text/html")
    assert "swagger" in client.get("/docs").text.lower()
    document = client.get("/openapi.json").json()
    assert set(document["paths"]) == {"/v1/gpus", "/v1/orders", "/healthz"}
    unknown = client.get("/v1/nothing-here")
    assert unknown.status_code == 404
    assert unknown.headers["content-type"] == PROBLEM_MEDIA_TYPE


REQUESTS = st.tuples(
    st.sampled_from(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]),
    st.sampled_from(["/v1", "/docs", "/redoc", "/openapi.json", "/healthz", "/health", "/readyz"]),
    st.sampled_from(["", "/", "/gpus", "/orders", "/x/y", "/a.json", "/assets/index-3f2a9c.js"]),
)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(request=REQUESTS)
def test_where_the_web_app_must_not_answer_it_changes_nothing(
    dist: Path, request: tuple[str, str, str]
) -> None:
    method, prefix, rest = request
    path = prefix + rest
    served = api_app()
    mount(served, dist)
    with TestClient(api_app()) as before, TestClient(served) as after:
        expected = before.request(method, path)
        got = after.request(method, path)
    assert (got.status_code, got.content) == (expected.status_code, expected.content), path


@given(
    method=st.sampled_from(["POST", "PUT", "PATCH", "DELETE"]),
    path=st.sampled_from(["/", "/gpus/rtx-4090", "/assets/index-3f2a9c.js"]),
)
@settings(max_examples=20, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_only_gets_reach_the_web_app(dist: Path, method: str, path: str) -> None:
    served = api_app()
    mount(served, dist)
    with TestClient(served) as after:
        assert after.request(method, path).status_code == 404


def test_without_a_build_the_app_paths_say_how_to_build_it_and_the_api_works(
    tmp_path: Path,
) -> None:
    dist = tmp_path / "dist"
    app = api_app()
    mount(app, dist)
    with TestClient(app) as client:
        for path in ("/", "/gpus/rtx-4090"):
            response = client.get(path)
            assert response.status_code == 503
            assert response.headers["content-type"] == PROBLEM_MEDIA_TYPE
            problem = response.json()
            assert problem["type"].endswith("/web-app-not-built")
            assert "make web" in problem["detail"]
        assert client.get("/v1/gpus").status_code == 200
        build(dist)  # built later: served without a restart
        assert client.get("/").text == INDEX


def test_paths_outside_the_build_are_never_files(dist: Path) -> None:
    (dist.parent / "secret.txt").write_text("no")
    assert resolve(dist, "/../secret.txt") is None
    assert resolve(dist, "/assets/../../secret.txt") is None
    assert resolve(dist, "/assets") is None  # a folder is not a file
    assert resolve(dist, "/favicon.svg") == dist / "favicon.svg"


def test_reserved_paths_and_asset_names() -> None:
    assert is_reserved("/v1")
    assert is_reserved("/v1/prices")
    assert is_reserved("/healthz")
    assert is_reserved("/health/live")
    assert is_reserved("/docs/oauth2-redirect")
    assert is_reserved("/metrics")
    assert not is_reserved("/v1beta")
    assert not is_reserved("/gpus/rtx-4090")
    assert not is_reserved("/")
    assert looks_like_file("/assets/index-3f2a9c.js")
    assert not looks_like_file("/gpus/rtx-4090")
    assert not looks_like_file("/")
