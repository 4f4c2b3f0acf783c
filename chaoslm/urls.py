from django.contrib import admin
from django.urls import include, path

from chaoslm import spending

urlpatterns = [
    path("admin/", admin.site.urls),
    path("account/usage/", spending.month_page, name="account_usage"),
    path("", include("debates.urls")),
    path("", include("rooms.urls")),
    path("", include("tournaments.urls")),
    path("", include("experiments.urls")),
    path("", include("api.urls")),
]
