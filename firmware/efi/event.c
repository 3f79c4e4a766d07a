// SPDX-License-Identifier: MIT
/*
 * event.c - UEFI events and timers without interrupts: timers are checked
 * (against efi_now_ns) whenever a service polls: CheckEvent, WaitForEvent,
 * SignalEvent, Stall. Notification functions run at once when an event is
 * signalled (TPLs are recorded but nothing preempts anything here).
 */
#include "firmware/efi/fw.h"
#include "firmware/lib/io.h"

#define MAX_EVENTS  64
#define EVENT_MAGIC 0x746e7665u /* "evnt" */

struct event {
	uint32_t magic, type;
	efi_tpl tpl;
	efi_event_notify fn;
	void *ctx;
	bool (*ready)(void); /* internal polled source */
	bool signalled, armed, has_group;
	efi_guid group;
	uint64_t deadline, period; /* ns */
};

static struct event events[MAX_EVENTS];

static struct event *ev_get(efi_event e)
{
	uintptr_t a = (uintptr_t)e, b = (uintptr_t)events;

	if (a < b || a >= b + sizeof(events) || (a - b) % sizeof(events[0]))
		return NULL;
	struct event *ev = e;

	return ev->magic == EVENT_MAGIC ? ev : NULL;
}

static struct event *ev_new(void)
{
	for (unsigned int i = 0; i < MAX_EVENTS; i++)
		if (events[i].magic != EVENT_MAGIC) {
			memset(&events[i], 0, sizeof(events[i]));
			events[i].magic = EVENT_MAGIC;
			return &events[i];
		}
	return NULL;
}

efi_status efi_event_create(uint32_t type, efi_tpl tpl, efi_event_notify fn, const void *ctx,
			    const efi_guid *group, efi_event *out)
{
	struct event *ev;

	if (!out || ((type & (EVT_NOTIFY_SIGNAL | EVT_NOTIFY_WAIT)) && !fn) ||
	    ((type & EVT_NOTIFY_SIGNAL) && (type & EVT_NOTIFY_WAIT)))
		return EFI_INVALID_PARAMETER;
	if ((type & (EVT_NOTIFY_SIGNAL | EVT_NOTIFY_WAIT)) &&
	    (tpl != TPL_APPLICATION && tpl != TPL_CALLBACK && tpl != TPL_NOTIFY &&
	     tpl != TPL_HIGH_LEVEL))
		return EFI_INVALID_PARAMETER;
	ev = ev_new();
	if (!ev)
		return EFI_OUT_OF_RESOURCES;
	ev->type = type;
	ev->tpl = tpl;
	ev->fn = fn;
	ev->ctx = (void *)(uintptr_t)ctx;
	if (group) {
		ev->has_group = true;
		ev->group = *group;
	}
	*out = ev;
	return EFI_SUCCESS;
}

efi_status efi_event_create_polled(bool (*ready)(void), efi_event *out)
{
	struct event *ev = ev_new();

	if (!ev)
		return EFI_OUT_OF_RESOURCES;
	ev->type = EVT_NOTIFY_WAIT;
	ev->ready = ready;
	*out = ev;
	return EFI_SUCCESS;
}

static void ev_fire(struct event *ev)
{
	ev->signalled = true;
	if ((ev->type & EVT_NOTIFY_SIGNAL) && ev->fn)
		ev->fn(ev, ev->ctx);
}

efi_status efi_event_signal(efi_event e)
{
	struct event *ev = ev_get(e);

	if (!ev)
		return EFI_INVALID_PARAMETER;
	if (ev->has_group) {
		efi_guid g = ev->group;

		for (unsigned int i = 0; i < MAX_EVENTS; i++)
			if (events[i].magic == EVENT_MAGIC && events[i].has_group &&
			    guid_eq(&events[i].group, &g))
				ev_fire(&events[i]);
	} else {
		ev_fire(ev);
	}
	return EFI_SUCCESS;
}

void efi_event_signal_type(uint32_t type)
{
	for (unsigned int i = 0; i < MAX_EVENTS; i++)
		if (events[i].magic == EVENT_MAGIC && events[i].type == type)
			ev_fire(&events[i]);
}

efi_status efi_event_close(efi_event e)
{
	struct event *ev = ev_get(e);

	if (!ev)
		return EFI_INVALID_PARAMETER;
	ev->magic = 0;
	return EFI_SUCCESS;
}

void efi_event_poll(void)
{
	uint64_t now = 0;
	bool have_now = false;

	for (unsigned int i = 0; i < MAX_EVENTS; i++) {
		struct event *ev = &events[i];

		if (ev->magic != EVENT_MAGIC || !ev->armed)
			continue;
		if (!have_now) {
			now = efi_now_ns();
			have_now = true;
		}
		if (now < ev->deadline)
			continue;
		if (ev->period) {
			ev->deadline += ev->period;
			if (ev->deadline < now) /* missed ticks: no burst */
				ev->deadline = now + ev->period;
		} else {
			ev->armed = false;
		}
		ev_fire(ev);
	}
}

efi_status efi_event_check(efi_event e)
{
	struct event *ev = ev_get(e);

	if (!ev || (ev->type & EVT_NOTIFY_SIGNAL))
		return EFI_INVALID_PARAMETER;
	efi_event_poll();
	if (!ev->signalled && ev->ready && ev->ready())
		ev->signalled = true;
	if (!ev->signalled && (ev->type & EVT_NOTIFY_WAIT) && ev->fn)
		ev->fn(ev, ev->ctx); /* may signal it */
	if (ev->signalled) {
		ev->signalled = false;
		return EFI_SUCCESS;
	}
	return EFI_NOT_READY;
}

efi_status efi_event_wait(uint64_t n, efi_event *evs, uint64_t *index)
{
	if (!n || !evs || !index)
		return EFI_INVALID_PARAMETER;
	for (;;) {
		for (uint64_t i = 0; i < n; i++) {
			efi_status st = efi_event_check(evs[i]);

			if (st == EFI_NOT_READY)
				continue;
			*index = i;
			return st;
		}
		fw_pause();
	}
}

efi_status efi_event_set_timer(efi_event e, uint32_t type, uint64_t trigger)
{
	struct event *ev = ev_get(e);

	if (!ev || !(ev->type & EVT_TIMER) || type > TimerRelative)
		return EFI_INVALID_PARAMETER;
	ev->armed = type != TimerCancel;
	if (!ev->armed)
		return EFI_SUCCESS;
	/* trigger is in 100 ns units; 0 = the next tick (we use 10 us) */
	uint64_t ns = trigger ? trigger * 100 : 10000;

	ev->deadline = efi_now_ns() + ns;
	ev->period = type == TimerPeriodic ? ns : 0;
	return EFI_SUCCESS;
}
