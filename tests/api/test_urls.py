"""The API's endpoints are mounted at /api/v1/ but built on first use (api/urls.py): a reverse in their namespace
or a request under /api/v1/ finds them, even as the first thing a process does, and Django's URL checks, which
`manage.py check` runs without them, pass over them once they are loaded."""

from __future__ import annotations

from django.core.checks.urls import check_resolver, check_url_namespaces_unique
from django.urls import URLPattern, URLResolver, get_resolver, resolve, reverse

from api.main import api
from api.problems import unknown
from tests.servers import run_python


def _patterns(patterns: list) -> list[URLPattern]:
    found: list[URLPattern] = []
    for pattern in patterns:
        found += _patterns(pattern.url_patterns) if isinstance(pattern, URLResolver) else [pattern]
    return found


def test_the_mount_names_the_namespace_ninja_names_the_endpoints_in():
    assert api.urls[1:] == ("ninja", "api")


def test_reversing_and_resolving_under_the_api():
    assert reverse("api:openapi-json") == "/api/v1/openapi.json"
    assert reverse("api:api-root") == "/api/v1/"
    docs = resolve("/api/v1/docs")
    assert (docs.namespace, docs.url_name) == ("api", "openapi-view")
    assert resolve("/api/v1/no/such/endpoint").func is unknown


def test_django_s_url_checks_pass_over_the_loaded_endpoints():
    resolve("/api/v1/")
    loaded = [p for p in _patterns(get_resolver().url_patterns) if p.callback is not unknown]
    assert sum(str(p.pattern).startswith(("debates", "rooms", "batches")) for p in loaded) > 10, "endpoints not walked"
    assert check_resolver(get_resolver()) == []
    assert check_url_namespaces_unique(None) == []


def test_in_a_new_process_check_leaves_the_api_unloaded_and_a_first_reverse_loads_it():
    code = (
        "import sys, django; django.setup()\n"
        "from django.core.management import call_command\n"
        "from django.urls import reverse\n"
        "call_command('check')\n"
        "print('ninja' in sys.modules)\n"
        "print(reverse('api:openapi-json'))\n"
        "print('ninja' in sys.modules)\n"
    )
    run = run_python(code)
    assert run.stdout.split("\n")[-4:-1] == ["False", "/api/v1/openapi.json", "True"], run.stdout + run.stderr
