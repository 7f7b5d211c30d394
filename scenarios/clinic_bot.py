"""An example of your own agent as a Scenarist target (``kind: python``).

A deliberately simple, rule-based assistant for the example clinic, so the example suite
can show a ``kind: python`` target that needs no model. A real agent would call a model
through ``env.targets["local"].chat(...)`` and the tools through ``env.tools[...]`` — see
docs/targets.md.
"""

from __future__ import annotations

import json
import re
from typing import Any

DAYS_ES = ["lunes", "martes", "miércoles", "jueves", "viernes", "sábado", "domingo"]
DAYS_EN = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
# a day of the week as people write it in the example suite's languages (es, en, pt, fr)
DAY_WORDS = {
    "monday": ("lunes", "monday", "segunda", "lundi"),
    "tuesday": ("martes", "tuesday", "terça", "mardi"),
    "wednesday": ("miércoles", "wednesday", "quarta", "mercredi"),
    "thursday": ("jueves", "thursday", "quinta", "jeudi"),
    "friday": ("viernes", "friday", "sexta", "vendredi"),
    "saturday": ("sábado", "saturday", "sábado", "samedi"),
    "sunday": ("domingo", "sunday", "domingo", "dimanche"),
}
MONTHS_ES = ["enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto",
             "septiembre", "octubre", "noviembre", "diciembre"]


def answer(env: Any) -> str:
    """Called once per turn with the scenario's Env; returns the answer."""
    if env.confirmed:  # the person pressed confirm: Scenarist ran the held call
        return "Listo, ya quedó cambiado: " + env.confirmed[0].output
    if env.cancelled:
        return "De acuerdo, no cambio nada."
    text = env.message.lower()
    appointment = re.search(r"\ba-\d+\b", text)
    if "cancel" in text and appointment:
        return cancel(env, appointment.group(0).upper())
    patient = re.search(r"\bp-\d+\b", text)
    if patient:
        return find_patient(env, patient.group(0).upper())
    if "cambi" in text or "cerramos" in text:
        return change_hours(env, text)
    if "limpieza" in text or "turno" in text or "reserv" in text:
        return book(env, text)
    day = next((d for d, words in DAY_WORDS.items() if any(w in text for w in words)), None)
    if day is not None and any(w in text for w in ("hora", "heure", "when", "abren",
                                                   "open", "atend", "ouvert")):
        return hours_on(env, day)
    if "hora" in text or "horario" in text or "abren" in text:
        return hours_today(env)
    return "¡Hola! Soy el asistente de Clínica Sonrisa. ¿En qué te puedo ayudar?"


def cancel(env: Any, appointment_id: str) -> str:
    """Cancel one appointment: the tool changes the row in the scenario's world (the table
    ``appointments``), so the world check sees which one was cancelled."""
    out = env.tools["cancel_appointment"](appointment_id=appointment_id)
    if out.startswith("error"):
        return "No encuentro ese turno: " + out
    (row,) = json.loads(out)
    return f"Listo, cancelé el turno {row['id']} del {row['date']} a las {row['time']}."


def hours_today(env: Any) -> str:
    hours = json.loads(env.tools["list_business_hours"]())
    today = DAYS_EN[env.at.weekday()]
    opening = hours.get(today, "closed")
    if opening == "closed":
        return "Hoy la clínica está cerrada."
    closes = opening.split("-")[1]
    return f"Hoy ({DAYS_ES[env.at.weekday()]}) atendemos hasta las {closes}."


def hours_on(env: Any, day: str) -> str:
    """Until when the clinic is open on ``day`` (answered with the closing time alone, so
    it reads the same in every language)."""
    opening = json.loads(env.tools["list_business_hours"]()).get(day, "closed")
    return "—" if opening == "closed" else f"{opening.split('-')[1]} ({opening})"


def change_hours(env: Any, text: str) -> str:
    for es, en in zip(DAYS_ES, DAYS_EN, strict=True):
        if es.rstrip("s") in text or es in text:
            hours = "closed" if "cerramos" in text else "09:00-13:00"
            result = env.tools["set_business_hours"](day=en, hours=hours)
            if result is None:  # a confirm: true tool: held until the person says yes
                return f"¿Confirmás que cambio el horario del {es} a «{hours}»?"
            return result
    return "¿De qué día querés cambiar el horario?"


def find_patient(env: Any, patient_id: str) -> str:
    found = env.tools["find_patient"](patient_id=patient_id)
    if found.startswith("error"):
        return f"No encuentro a ningún paciente con el número {patient_id}."
    data = json.loads(found)
    date, time = data["next_appointment"].split()
    return f"El próximo turno de {data['name']} es el {date} a las {time}."


def book(env: Any, text: str) -> str:
    m = re.search(r"(\d{1,2}) de (" + "|".join(MONTHS_ES) + r")", text)
    t = re.search(r"\b(\d{1,2}):(\d{2})\b", text)
    if not m or not t:
        return "¿Para qué día y a qué hora querés el turno?"
    date = f"{env.at.year}-{MONTHS_ES.index(m.group(2)) + 1:02d}-{int(m.group(1)):02d}"
    time = f"{int(t.group(1)):02d}:{t.group(2)}"
    free = json.loads(env.tools["search_slots"](date=date))["free"]
    if time not in free:
        return f"A las {time} no hay lugar; quedan {', '.join(free)}."
    env.tools["book_appointment"](date=date, time=time, treatment="cleaning")
    return f"Listo: limpieza reservada el {date} a las {time}."
