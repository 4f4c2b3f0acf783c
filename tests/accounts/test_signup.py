"""Signing up, as a stranger finds it on a site that lets strangers in (CHAOSLM_SIGNUP=true)."""

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

pytestmark = pytest.mark.django_db


@pytest.fixture
def open_signup(settings):
    settings.CHAOSLM_SIGNUP = True


def test_signing_up_makes_the_account_and_logs_it_in(client, open_signup):
    response = client.post(
        reverse("signup"), {"username": "newbie", "password1": "walker-pass-991", "password2": "walker-pass-991"}
    )

    assert response.status_code == 302 and response["Location"] == reverse("home")
    assert get_user_model().objects.filter(username="newbie").exists()
    home = client.get(reverse("home"))
    assert home.context["user"].username == "newbie"
    assert 'href="/debates/new/"' in home.content.decode()


def test_a_refused_sign_up_keeps_the_username_and_says_what_to_fix(client, open_signup):
    response = client.post(reverse("signup"), {"username": "newbie", "password1": "short", "password2": "short"})

    html = response.content.decode()
    assert response.status_code == 200
    assert 'value="newbie"' in html
    assert "What to fix" in html and "This password is too short." in html
    assert not get_user_model().objects.filter(username="newbie").exists()


def test_the_login_page_and_home_lead_to_sign_up_only_when_it_is_open(client, settings):
    signup = f'href="{reverse("signup")}"'
    settings.CHAOSLM_SIGNUP = False
    assert signup not in client.get(reverse("login")).content.decode()
    assert signup not in client.get(reverse("home")).content.decode()

    settings.CHAOSLM_SIGNUP = True
    assert signup in client.get(reverse("login")).content.decode()
    assert signup in client.get(reverse("home")).content.decode()


def test_with_sign_up_off_the_login_page_and_the_sign_up_address_say_who_makes_accounts(client, settings):
    settings.CHAOSLM_SIGNUP = False
    login = client.get(reverse("login")).content.decode()
    assert (
        "No account yet? Sign-up is off on this site: its administrator makes the accounts, so ask them for one."
        in login
    )
    closed = client.get(reverse("signup"))
    html = closed.content.decode()
    assert closed.status_code == 404
    assert "<h1>Sign-up is off</h1>" in html
    assert "This site does not let visitors make their own accounts: its administrator makes them." in html
    assert f'<a href="{reverse("login")}">log in</a>' in html
    assert "private debate" not in html  # not the 404 page's words

    settings.CHAOSLM_SIGNUP = True
    assert "Sign-up is off" not in client.get(reverse("login")).content.decode()
