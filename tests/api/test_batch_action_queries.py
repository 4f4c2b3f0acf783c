"""A batch's pause, resume and cancel do what their path says, whatever the query string: `?action=` named a
parameter of the view and overrode the path's (`POST /batches/experiment/5/pause?action=x` was a KeyError, a 500;
`pause?action=cancel` cancelled). Every action route of the OpenAPI document is called, with junk queries."""

from __future__ import annotations

import pytest

from api.main import api
from api.tokens import create_token
from batches.kinds import KINDS

pytestmark = pytest.mark.django_db

ACTIONS = ("pause", "resume", "cancel")
# What each action leaves a batch as, from the status it applies to.
STEPS = [("pause", "running", "paused"), ("resume", "paused", "running"), ("cancel", "running", "cancelled")]
# Every registered kind's own address (a kind with faces for the API has one, batches/faces.py) and /batches/'s.
ROUTES = {
    name: (f"/{name}s/{{batch_id}}", "/batches/{kind}/{batch_id}")
    for name, kind in KINDS.items()
    if kind.faces is not None
}
JUNK = ["action=x", "action={other}", "kind=experiment&batch_id=1", "junk=%E2%9C%93&action=x&action=y"]


def test_every_action_route_of_the_document_is_called_here():
    documented = {
        path.removeprefix("/api/v1")
        for path, operations in api.get_openapi_schema()["paths"].items()
        if "post" in operations and path.rsplit("/", 1)[-1] in ACTIONS
    }
    called = {f"{base}/{action}" for bases in ROUTES.values() for base in bases for action in ACTIONS}
    assert documented == called


@pytest.fixture
def call(client, people):
    _, secret = create_token(people["owner"], "actions", read_only=False)

    def send(path: str):
        return client.generic("POST", "/api/v1" + path, HTTP_AUTHORIZATION=f"Bearer {secret}")

    return send


def _batch(kind: str, owner, status: str):
    # A batch with no jobs: what its actions do is about its status alone.
    return KINDS[kind].model.objects.create(name="Queried", owner=owner, status=status)


@pytest.mark.parametrize("junk", JUNK)
@pytest.mark.parametrize("kind", list(ROUTES))
@pytest.mark.parametrize("base", [0, 1], ids=["own-address", "batches-address"])
@pytest.mark.parametrize(("action", "before", "after"), STEPS, ids=[step[0] for step in STEPS])
def test_the_path_says_which_action_whatever_the_query(call, people, junk, kind, base, action, before, after):
    batch = _batch(kind, people["owner"], before)
    path = ROUTES[kind][base].format(kind=kind, batch_id=batch.pk)
    other = next(a for a in ACTIONS if a != action)
    reply = call(f"{path}/{action}?{junk.format(other=other)}")
    assert reply.status_code == 200, reply.content[:300]
    assert reply.json()["status"] == after
    batch.refresh_from_db()
    assert batch.status == after
