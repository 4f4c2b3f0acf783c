from django.urls import path

from audience import poll_views
from chaoslm import http  # noqa: F401  (registers the <id:...> converter)

# A debate's poll, at its page's address and its share page's (the names are the debate pages' own).
urlpatterns = [
    path("debates/<id:pk>/poll/", poll_views.poll_box, name="debate_poll"),
    path("debates/<id:pk>/poll/vote/", poll_views.poll_vote, name="debate_poll_vote"),
    path("debates/<id:pk>/poll/close/", poll_views.poll_close, name="debate_poll_close"),
    path("s/<str:token>/poll/", poll_views.poll_box_shared, name="debate_share_poll"),
    path("s/<str:token>/poll/vote/", poll_views.poll_vote_shared, name="debate_share_poll_vote"),
]
