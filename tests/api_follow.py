"""Following a 202 Accepted, as a client of any app's API does: the helper their tests share."""


def followed(client, response) -> dict:
    """The body a GET on the 202's Location answers (200), after checking that the Location is
    absolute and, where the 202's body names a `url`, that it is the same."""
    assert response.status_code == 202, response.content
    location = response["Location"]
    assert location.startswith("http://testserver/"), location
    assert response.json().get("url", location) == location
    answer = client.get(location)
    assert answer.status_code == 200, answer.content
    return answer.json()
