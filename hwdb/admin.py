"""Django admin for components (attributes inline), computational and system models."""

from __future__ import annotations

from django.contrib import admin

from hwdb.models import Attribute, Component, ComputationalModel, SystemModel


class AttributeInline(admin.TabularInline):
    model = Attribute
    extra = 1
    fields = ("key", "value", "unit", "source")


@admin.register(Component)
class ComponentAdmin(admin.ModelAdmin):
    list_display = ("name", "type", "vendor", "owner", "shared", "updated")
    list_filter = ("type", "shared", "vendor")
    search_fields = ("name", "vendor", "comment")
    inlines = [AttributeInline]
    raw_id_fields = ("owner",)


@admin.register(ComputationalModel)
class ComputationalModelAdmin(admin.ModelAdmin):
    list_display = ("name", "language", "builtin", "owner", "shared", "updated")
    list_filter = ("language", "builtin", "shared")
    search_fields = ("name", "description")
    raw_id_fields = ("owner",)


@admin.register(SystemModel)
class SystemModelAdmin(admin.ModelAdmin):
    list_display = ("name", "owner", "shared", "updated")
    list_filter = ("shared",)
    search_fields = ("name", "description")
    raw_id_fields = ("owner",)
    readonly_fields = ("components", "computational_models")
