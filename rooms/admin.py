from django.contrib import admin

from rooms.models import Room, RoomAgent, RoomMessage


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


@admin.register(RoomMessage)
class RoomMessageAdmin(admin.ModelAdmin):
    list_display = ["room", "kind", "author", "active", "created_at"]
    list_filter = ["kind", "active"]
