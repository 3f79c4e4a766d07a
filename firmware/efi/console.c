// SPDX-License-Identifier: MIT
/*
 * console.c - SimpleTextOutput and SimpleTextInput on the serial port:
 * UCS-2 out as UTF-8, ANSI sequences for clearing and cursor moves; keys
 * in from the UART receive register (ESC [ A..D as arrow scan codes), also
 * through simple text input ex (no modifier keys on a serial line); the
 * legacy console control protocol that says the console is text.
 */
#include "firmware/abi.h"
#include "firmware/efi/fw.h"
#include "firmware/lib/cpu.h"
#include "firmware/lib/io.h"
#include "firmware/lib/serial.h"

#define UART_LSR_DR 0x01
#define SCAN_UP	    1
#define SCAN_DOWN   2
#define SCAN_RIGHT  3
#define SCAN_LEFT   4
#define SCAN_ESC    0x17

static struct fw_serial com;
static bool com_ready;
static int port_console = -1; /* the VMM's console op: -1 not tried yet */
static struct efi_simple_text_output_mode out_mode = {.max_mode = 1, .cursor_visible = true};
static struct efi_simple_text_output con_out;
static struct efi_simple_text_input con_in;
static efi_handle con_handle;
static char log_buf[4096];
static size_t log_len;

/* Through the VMM's console op (firmware/abi.h) while it takes the
 * output, else COM1 (programmed at its first use). */
void efi_console_write(const char *s, size_t n)
{
	uint32_t len = (uint32_t)n;

	if (port_console != 0 && n <= FW_ABI_EFI_CONSOLE_MAX) {
		port_console = efi_port_call(FW_ABI_EFI_CONSOLE, (void *)(uintptr_t)s, len, &len) ==
			       FW_ABI_EFI_OK;
		if (port_console)
			return;
	}
	if (!com_ready) {
		fw_serial_init(&com, com.port);
		com_ready = true;
	}
	fw_serial_write(&com, s, n);
}

void efi_log_flush(void)
{
	if (log_len)
		efi_console_write(log_buf, log_len);
	log_len = 0;
}

void efi_log(const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	memcpy(buf, "efi: ", 5);
	va_start(ap, fmt);
	n = fw_vsnprintf(buf + 5, sizeof(buf) - 6, fmt, ap);
	va_end(ap);
	n = n + 5 > (int)sizeof(buf) - 2 ? (int)sizeof(buf) - 2 : n + 5;
	buf[n++] = '\n';
	if (fw_cpl() != 3) { /* CPL0: the order with the app's output counts */
		efi_log_flush();
		efi_console_write(buf, (size_t)n);
		return;
	}
	if (log_len + (size_t)n > sizeof(log_buf))
		efi_log_flush();
	memcpy(log_buf + log_len, buf, (size_t)n);
	log_len += (size_t)n;
}

static efi_status EFIAPI out_reset(struct efi_simple_text_output *self, bool ext)
{
	(void)self, (void)ext;
	return EFI_SUCCESS;
}

static efi_status EFIAPI out_string(struct efi_simple_text_output *self, const char16 *s)
{
	char buf[128];
	size_t n = 0;

	(void)self;
	if (!s)
		return EFI_INVALID_PARAMETER;
	for (; *s; s++) {
		char16 c = *s;

		if (n + 3 > sizeof(buf)) {
			efi_console_write(buf, n);
			n = 0;
		}
		if (c < 0x80) {
			buf[n++] = (char)c;
		} else if (c < 0x800) {
			buf[n++] = (char)(0xc0 | c >> 6);
			buf[n++] = (char)(0x80 | (c & 0x3f));
		} else if (c >= 0x2500 && c < 0x2580) {
			buf[n++] = '+'; /* box drawing: plain ASCII on a serial line */
		} else {
			buf[n++] = (char)(0xe0 | c >> 12);
			buf[n++] = (char)(0x80 | ((c >> 6) & 0x3f));
			buf[n++] = (char)(0x80 | (c & 0x3f));
		}
		if (c == '\n')
			out_mode.cursor_row++;
		if (c == '\r')
			out_mode.cursor_column = 0;
		else if (c >= 0x20)
			out_mode.cursor_column++;
	}
	efi_console_write(buf, n);
	return EFI_SUCCESS;
}

static efi_status EFIAPI out_test(struct efi_simple_text_output *self, const char16 *s)
{
	(void)self, (void)s;
	return EFI_SUCCESS;
}

static efi_status EFIAPI out_query(struct efi_simple_text_output *self, uint64_t mode,
				   uint64_t *cols, uint64_t *rows)
{
	(void)self;
	if (mode != 0)
		return EFI_UNSUPPORTED;
	if (cols)
		*cols = 80;
	if (rows)
		*rows = 25;
	return EFI_SUCCESS;
}

static efi_status EFIAPI out_set_mode(struct efi_simple_text_output *self, uint64_t mode)
{
	(void)self;
	return mode == 0 ? EFI_SUCCESS : EFI_UNSUPPORTED;
}

static efi_status EFIAPI out_set_attr(struct efi_simple_text_output *self, uint64_t attr)
{
	(void)self;
	out_mode.attribute = (int32_t)(attr & 0x7f);
	return EFI_SUCCESS;
}

static efi_status EFIAPI out_clear(struct efi_simple_text_output *self)
{
	(void)self;
	efi_console_write("\033[2J\033[H", 7);
	out_mode.cursor_column = out_mode.cursor_row = 0;
	return EFI_SUCCESS;
}

static efi_status EFIAPI out_set_cursor(struct efi_simple_text_output *self, uint64_t col,
					uint64_t row)
{
	char buf[32];
	int n;

	(void)self;
	if (col >= 80 || row >= 25)
		return EFI_UNSUPPORTED;
	n = fw_snprintf(buf, sizeof(buf), "\033[%u;%uH", (unsigned int)row + 1,
			(unsigned int)col + 1);
	efi_console_write(buf, (size_t)n);
	out_mode.cursor_column = (int32_t)col;
	out_mode.cursor_row = (int32_t)row;
	return EFI_SUCCESS;
}

static efi_status EFIAPI out_enable_cursor(struct efi_simple_text_output *self, bool visible)
{
	(void)self;
	out_mode.cursor_visible = visible;
	return EFI_SUCCESS;
}

static bool key_ready(void)
{
	return inb(com.port + 5) & UART_LSR_DR;
}

static int read_byte(void)
{
	for (int spin = 0; spin < 2000; spin++)
		if (key_ready())
			return inb(com.port);
	return -1;
}

static efi_status EFIAPI in_reset(struct efi_simple_text_input *self, bool ext)
{
	(void)self, (void)ext;
	while (key_ready())
		inb(com.port);
	return EFI_SUCCESS;
}

static efi_status EFIAPI in_read_key(struct efi_simple_text_input *self, struct efi_input_key *key)
{
	(void)self;
	if (!key)
		return EFI_INVALID_PARAMETER;
	if (!key_ready())
		return EFI_NOT_READY;
	int c = inb(com.port);

	*key = (struct efi_input_key){0, 0};
	if (c == 0x1b) {
		int c2 = read_byte(), c3 = c2 == '[' ? read_byte() : -1;

		key->scan_code = c3 == 'A'   ? SCAN_UP
				 : c3 == 'B' ? SCAN_DOWN
				 : c3 == 'C' ? SCAN_RIGHT
				 : c3 == 'D' ? SCAN_LEFT
					     : SCAN_ESC;
		return EFI_SUCCESS;
	}
	key->unicode_char = c == 0x7f ? 0x08 : c == '\n' ? '\r' : (char16)c;
	return EFI_SUCCESS;
}

/* simple text input ex (protocols.h): the same keys, no modifiers */
static efi_status EFIAPI inx_reset(struct efi_simple_text_input_ex *self, bool ext)
{
	(void)self;
	return in_reset(&con_in, ext);
}

static efi_status EFIAPI inx_read_key(struct efi_simple_text_input_ex *self,
				      struct efi_key_data *key)
{
	(void)self;
	if (!key)
		return EFI_INVALID_PARAMETER;
	*key = (struct efi_key_data){.shift_state = EFI_SHIFT_STATE_VALID,
				     .toggle_state = EFI_TOGGLE_STATE_VALID};
	return in_read_key(&con_in, &key->key);
}

static efi_status EFIAPI inx_set_state(struct efi_simple_text_input_ex *self, uint8_t *toggle)
{
	(void)self;
	return toggle ? EFI_UNSUPPORTED : EFI_INVALID_PARAMETER;
}

static efi_status EFIAPI inx_register(struct efi_simple_text_input_ex *self,
				      struct efi_key_data *key, void *fn, void **handle)
{
	(void)self;
	return key && fn && handle ? EFI_UNSUPPORTED : EFI_INVALID_PARAMETER;
}

static efi_status EFIAPI inx_unregister(struct efi_simple_text_input_ex *self, void *handle)
{
	(void)self, (void)handle;
	return EFI_INVALID_PARAMETER; /* none was registered */
}

static struct efi_simple_text_input_ex con_in_ex = {
    .reset = inx_reset,
    .read_key_stroke_ex = inx_read_key,
    .set_state = inx_set_state,
    .register_key_notify = inx_register,
    .unregister_key_notify = inx_unregister,
};

/* console control (protocols.h): a text console, nothing else */
static efi_status EFIAPI cc_get_mode(struct efi_console_control *self, uint32_t *mode,
				     bool *gop_uga_exists, bool *std_in_locked)
{
	(void)self;
	if (!mode)
		return EFI_INVALID_PARAMETER;
	*mode = EFI_SCREEN_TEXT;
	if (gop_uga_exists) /* GRUB passes NULL for both */
		*gop_uga_exists = false;
	if (std_in_locked)
		*std_in_locked = false;
	return EFI_SUCCESS;
}

static efi_status EFIAPI cc_set_mode(struct efi_console_control *self, uint32_t mode)
{
	(void)self;
	if (mode >= EFI_SCREEN_MAX)
		return EFI_INVALID_PARAMETER;
	return mode == EFI_SCREEN_TEXT ? EFI_SUCCESS : EFI_UNSUPPORTED;
}

static efi_status EFIAPI cc_lock_std_in(struct efi_console_control *self, const char16 *password)
{
	(void)self, (void)password;
	return EFI_UNSUPPORTED;
}

static struct efi_console_control con_control = {
    .get_mode = cc_get_mode, .set_mode = cc_set_mode, .lock_std_in = cc_lock_std_in};

void efi_console_init(uint16_t port)
{
	com.port = port;
	con_out = (struct efi_simple_text_output){
	    .reset = out_reset,
	    .output_string = out_string,
	    .test_string = out_test,
	    .query_mode = out_query,
	    .set_mode = out_set_mode,
	    .set_attribute = out_set_attr,
	    .clear_screen = out_clear,
	    .set_cursor_position = out_set_cursor,
	    .enable_cursor = out_enable_cursor,
	    .mode = &out_mode,
	};
	con_in = (struct efi_simple_text_input){.reset = in_reset, .read_key_stroke = in_read_key};
	efi_event_create_polled(key_ready, &con_in.wait_for_key);
	efi_event_create_polled(key_ready, &con_in_ex.wait_for_key_ex);
	proto_install(&con_handle, &efi_simple_text_out_guid, &con_out);
	proto_install(&con_handle, &efi_simple_text_in_guid, &con_in);
	proto_install(&con_handle, &efi_simple_text_in_ex_guid, &con_in_ex);
	proto_install(&con_handle, &efi_console_control_guid, &con_control);
	efi_st.con_in_handle = efi_st.con_out_handle = efi_st.stderr_handle = con_handle;
	efi_st.con_in = &con_in;
	efi_st.con_out = efi_st.std_err = &con_out;
}

size_t efi_strlen16(const char16 *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

void efi_ascii_to16(char16 *out, const char *in, size_t cap)
{
	size_t i = 0;

	while (i + 1 < cap && in[i]) {
		out[i] = (uint8_t)in[i];
		i++;
	}
	if (cap)
		out[i] = 0;
}
