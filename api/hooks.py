"""Your webhooks over the API: register an address (public only, api/webhooks.py) for events (a debate finished
or failed, a tournament or an experiment finished), list them with their deliveries' log, remove one, redeliver a
delivery."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from ninja import Field, Router, Schema

from api import webhooks
from api.models import Delivery, Webhook
from api.problems import ApiError
from api.refusals import refusals
from chaoslm.schemas import Input

router = Router(tags=["webhooks"])

EventKind = Annotated[
    str,
    Field(
        max_length=60,
        description="debate.finished, debate.failed, room.stopped, tournament.finished, experiment.finished, or "
        "`<kind>.finished` for any other kind of batch (`GET /batches` lists them)",
    ),
]


class WebhookIn(Input):
    url: str = Field(max_length=500, description="A public http(s) address.")
    secret: str = Field(min_length=16, max_length=100, description="Signs each delivery (X-ChaosLM-Signature).")
    events: list[EventKind] = Field(min_length=1, max_length=10)


class WebhookOut(Schema):
    id: int
    url: str
    events: list[str]
    active: bool
    created_at: datetime


class DeliveryOut(Schema):
    id: int
    kind: str
    status: str = Field(description="pending, delivered, or failed (gave up)")
    attempts: int
    last_status_code: int | None
    last_error: str
    payload: dict[str, Any]
    created_at: datetime
    updated_at: datetime


def _webhook(w: Webhook) -> dict[str, Any]:
    return {"id": w.pk, "url": w.url, "events": w.events, "active": w.active, "created_at": w.created_at}


def _delivery(d: Delivery) -> dict[str, Any]:
    fields = ("kind", "status", "attempts", "last_status_code", "last_error", "payload", "created_at", "updated_at")
    return {"id": d.pk, **{name: getattr(d, name) for name in fields}}


@router.post("/webhooks", response={201: WebhookOut, **refusals(403, 422)}, summary="Register a webhook")
def create_webhook(request: HttpRequest, body: WebhookIn) -> Any:
    """Its address must be public, also once its name is resolved (422 otherwise)."""
    known = [value for value, _ in webhooks.event_kinds()]
    unknown = [event for event in body.events if event not in known]
    if unknown:
        detail = f"There is no event {unknown[0]!r}; the events are {', '.join(known)}."
        raise ApiError(422, detail, errors=[{"field": "events", "message": detail}])
    try:
        made = webhooks.register(request.user, body.url, body.secret, list(body.events))
    except webhooks.Refused as error:
        raise ApiError(422, str(error), errors=[{"field": "url", "message": str(error)}]) from None
    return 201, _webhook(made)


@router.get("/webhooks", response={200: list[WebhookOut], **refusals()}, summary="List your webhooks")
def list_webhooks(request: HttpRequest) -> Any:
    return [_webhook(w) for w in Webhook.objects.filter(owner=request.user)]


@router.delete("/webhooks/{id:webhook_id}", response={204: None, **refusals(403, 404)}, summary="Remove a webhook")
def delete_webhook(request: HttpRequest, webhook_id: int) -> Any:
    # Another person's webhook is the same 404 as none at all.
    webhook = get_object_or_404(Webhook, pk=webhook_id, owner=request.user)
    webhook.delete()
    return 204, None


@router.get(
    "/webhooks/{id:webhook_id}/deliveries",
    response={200: list[DeliveryOut], **refusals(404)},
    summary="A webhook's deliveries",
)
def list_deliveries(request: HttpRequest, webhook_id: int) -> Any:
    """The latest 100, newest first: status, attempts, the last status code and error."""
    webhook = get_object_or_404(Webhook, pk=webhook_id, owner=request.user)
    return [_delivery(d) for d in webhook.deliveries.all()[:100]]


@router.post(
    "/deliveries/{id:delivery_id}/redeliver",
    response={202: DeliveryOut, **refusals(403, 404)},
    summary="Redeliver a delivery",
)
def redeliver(request: HttpRequest, delivery_id: int) -> Any:
    """A fresh round of attempts, with the same body."""
    delivery = get_object_or_404(Delivery, pk=delivery_id, webhook__owner=request.user)
    webhooks.redeliver(delivery)
    delivery.refresh_from_db()
    return 202, _delivery(delivery)
