from django.urls import path

from debates.consumers import DebateConsumer

websocket_urlpatterns = [
    path("ws/debates/<int:pk>/", DebateConsumer.as_asgi()),
    path("ws/share/<str:token>/", DebateConsumer.as_asgi()),
]
