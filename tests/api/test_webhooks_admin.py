"""The webhooks' models in the admin, as staff read them."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

pytestmark = pytest.mark.django_db


def test_the_admin_calls_deliveries_deliveries():
    staff = get_user_model().objects.create_superuser("root", password="pw-root-123")
    client = Client()
    client.force_login(staff)
    index = client.get("/admin/").content.decode()
    assert ">Deliveries</a>" in index and "Deliverys" not in index
    listing = client.get("/admin/api/delivery/").content.decode()
    assert "Select delivery to change" in listing and "0 deliveries" in listing
