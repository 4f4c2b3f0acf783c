from django.urls import path

from experiments.consumers import ExperimentConsumer

websocket_urlpatterns = [
    path("ws/experiments/<int:pk>/", ExperimentConsumer.as_asgi()),
    path("ws/experiment-share/<str:token>/", ExperimentConsumer.as_asgi()),
]
