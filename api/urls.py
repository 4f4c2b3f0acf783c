"""The API's URLs: /api/v1/ (its endpoints, schema and docs page) and any other address under it. (The account
pages for tokens and webhooks are the accounts app's: accounts/urls.py.)

The endpoints' patterns are django-ninja's, built from the routers in api/main.py; building them imports ninja,
pydantic and, through ninja, django.test and jinja2: the largest part of the start of every command that reads
the URLconf (`manage.py check`, bench/startup.py). They load on the first request or reverse under /api/v1/.
"""

from __future__ import annotations

from django.core.checks import CheckMessage
from django.core.checks.urls import check_resolver
from django.urls import ResolverMatch, URLPattern, URLResolver, path, re_path
from django.urls.resolvers import RoutePattern

from api.problems import unknown


class DeferredURLconf(URLResolver):
    """The patterns of the URLconf module `urlconf_name`, imported when a request or a reverse first looks in them
    (resolve and _populate, the reverse lookups' one way in), not with the project's URLconf.

    Until then `url_patterns` is empty, and that is what Django's system checks walk (check() and the namespaces'
    check): they see the mount, not ninja's patterns, which ninja makes from the routers' paths (no regex, no
    leading slash, no name with a colon: nothing the URL checks look for that our code could get wrong).
    tests/api/test_urls.py runs the same checks over them once loaded."""

    def __init__(self, urlconf_name: str) -> None:
        super().__init__(RoutePattern("", is_endpoint=False), urlconf_name)
        self._used = False

    @property
    def url_patterns(self) -> list[URLPattern | URLResolver]:
        return super().url_patterns if self._used else []

    def resolve(self, path: str) -> ResolverMatch | None:
        self._used = True
        return super().resolve(path)

    def _populate(self) -> None:
        self._used = True
        super()._populate()

    def check(self) -> list[CheckMessage]:
        # URLResolver.check() would also look for error handlers in the module, importing it; Django uses only the
        # root URLconf's.
        messages = [message for pattern in self.url_patterns for message in check_resolver(pattern)]
        return messages or self.pattern.check()


urlpatterns = [
    # Outside the deferred part, so that a reverse in the namespace finds it without importing the API; the
    # app name is ninja's, the namespace is api/main.py's urls_namespace.
    path("api/v1/", ([DeferredURLconf("api.main")], "ninja", "api")),
    re_path(r"^api/v1/(?P<rest>.*)$", unknown),
]
