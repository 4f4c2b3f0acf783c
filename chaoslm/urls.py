from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("", include("debates.urls")),
    path("", include("rooms.urls")),
    path("", include("tournaments.urls")),
    path("", include("experiments.urls")),
    path("", include("api.urls")),
]
