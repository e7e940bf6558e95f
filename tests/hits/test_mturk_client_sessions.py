"""Every MTurk client of a process shares one botocore data loader (the service model and endpoint
files parsed once), while each still resolves its own credentials from boto3's chain."""
import pytest

from hits.providers.mturk import client as mturk_client


@pytest.fixture
def endpoint(settings):
    settings.QUORUM_MTURK_ENDPOINT_URL = "http://127.0.0.1:9"


def test_clients_share_the_parsed_model_but_not_the_credentials(endpoint, monkeypatch):
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAFIRSTFIRSTFIRST")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "first-secret")
    first = mturk_client.build_client()
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIASECONDSECONDSEC")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "second-secret")
    second = mturk_client.build_client()

    assert first._request_signer._credentials.access_key == "AKIAFIRSTFIRSTFIRST"
    assert second._request_signer._credentials.access_key == "AKIASECONDSECONDSEC"
    assert first._loader is second._loader  # the parsed files, once per process
    assert first.meta.service_model.service_name == "mturk" and second.meta.endpoint_url == "http://127.0.0.1:9"


def test_the_shared_loader_does_not_grow_with_every_session(endpoint, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAFAKEFAKEFAKE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "fake-secret")
    mturk_client.build_client()
    paths = list(mturk_client._data_loader.search_paths)
    for _ in range(3):
        mturk_client.build_client()
    assert mturk_client._data_loader.search_paths == paths
    assert len(set(paths)) == len(paths) and any(p.endswith("boto3/data") for p in paths)
