from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect

from rooms import services, work
from rooms.models import Room, RoomAgent, RoomMessage, RoomTemplate


class RoomAgentInline(admin.TabularInline):
    model = RoomAgent
    extra = 0
    fields = ["name", "role", "participating", "persona"]
    readonly_fields = ["name", "role", "persona"]


@admin.register(Room)
class RoomAdmin(admin.ModelAdmin):
    list_display = ["title", "owner", "mode", "visibility", "updated_at"]
    list_filter = ["mode", "visibility"]
    search_fields = ["title"]
    inlines = [RoomAgentInline]

    def delete_model(self, request: HttpRequest, obj: Room) -> None:
        work.delete(obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Room]) -> None:
        for room in queryset:
            work.delete(room)


@admin.register(RoomMessage)
class RoomMessageAdmin(admin.ModelAdmin):
    list_display = ["room", "kind", "author", "active", "created_at"]
    list_filter = ["kind", "active"]


@admin.register(RoomTemplate)
class RoomTemplateAdmin(admin.ModelAdmin):
    list_display = ["name", "owner", "created_at"]
    search_fields = ["name"]
    actions = ["start_room"]

    @admin.action(description="Open a new room from this template (yours, private)")
    def start_room(self, request: HttpRequest, queryset: QuerySet[RoomTemplate]) -> HttpResponse | None:
        templates = list(queryset)
        if len(templates) != 1:
            self.message_user(request, "Choose one template.", level="error")
            return None
        template = templates[0]
        room = services.create_from_template(request.user, template, template.name, Room.Visibility.PRIVATE)
        return redirect("room_detail", room.pk)
