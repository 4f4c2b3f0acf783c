from django.contrib.auth import views as auth_views
from django.urls import path

from debates import views

urlpatterns = [
    path("", views.home, name="home"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/signup/", views.signup, name="signup"),
    path("debates/new/", views.new_debate, name="debate_new"),
    path("personas/prompt/", views.persona_prompt, name="persona_prompt"),
    path("debates/<int:pk>/", views.debate_detail, name="debate_detail"),
    path("debates/<int:pk>/export.<str:kind>", views.debate_export, name="debate_export"),
    path("debates/<int:pk>/end/", views.debate_end, name="debate_end"),
    path("debates/<int:pk>/speak/", views.debate_speak, name="debate_speak"),
    path("debates/<int:pk>/retry/", views.debate_retry, name="debate_retry"),
    path("debates/<int:pk>/visibility/", views.debate_visibility, name="debate_visibility"),
    path("debates/<int:pk>/delete/", views.debate_delete, name="debate_delete"),
    path("s/<str:token>/", views.debate_share, name="debate_share"),
    path("s/<str:token>/export.<str:kind>", views.debate_share_export, name="debate_share_export"),
]
