from django.contrib import admin
from django.http import HttpRequest, HttpResponsePermanentRedirect
from django.templatetags.static import static
from django.urls import include, path


def favicon(request: HttpRequest) -> HttpResponsePermanentRedirect:
    """Browsers and tools ask for /favicon.ico whatever the pages link: the pages' icon, not a 404. (Its address is
    looked up per request: a production storage's hashed names are known only once collected.)"""
    return HttpResponsePermanentRedirect(static("favicon.svg"))


urlpatterns = [
    path("admin/", admin.site.urls),
    path("favicon.ico", favicon, name="favicon"),
    path("", include("accounts.urls")),
    path("", include("debates.urls")),
    path("", include("audience.urls")),
    path("", include("rooms.urls")),
    path("", include("tournaments.urls")),
    path("", include("experiments.urls")),
    path("", include("comparisons.urls")),
    path("", include("api.urls")),
]
