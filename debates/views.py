from django.db.models import Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from chaoslm.personas.models import Persona, default_endpoint
from debates.models import Debate


def home(request: HttpRequest) -> HttpResponse:
    visible = Q(visibility=Debate.Visibility.PUBLIC)
    if request.user.is_authenticated:
        visible |= Q(owner=request.user)
    debates = Debate.objects.filter(visible).select_related("owner")[:50]
    endpoint = default_endpoint()
    return render(
        request,
        "home.html",
        {
            "debates": debates,
            "persona_count": Persona.objects.count(),
            "endpoint": endpoint,
            "is_local_model": endpoint.name.startswith("local"),
        },
    )
