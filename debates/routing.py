from django.urls import path

from chaoslm import http  # noqa: F401  (registers the <id:...> converter)
from debates.consumers import DebateConsumer

websocket_urlpatterns = [
    path("ws/debates/<id:pk>/", DebateConsumer.as_asgi()),
    path("ws/share/<str:token>/", DebateConsumer.as_asgi()),
]
