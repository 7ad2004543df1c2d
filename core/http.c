#include "core/http.h"

#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "core/banned.h"

struct http_req {
	struct http_multi *m;
	struct http_req *next;
	CURL *easy;
	struct curl_slist *hdrs;
	char *url;
	char *body;
	char *method;
	struct http_request_opts o; /* url, headers, body point to our copies */
	bool started;
	bool cancelled;
	bool aborted;
	long hdr_status;            /* status of the response being read */
	char errbuf[CURL_ERROR_SIZE];
};

struct http_sock {
	curl_socket_t fd;
	int what;
};

struct http_multi {
	CURLM *multi;
	struct http_req *reqs;
	struct http_sock *socks;
	size_t nsocks, capsocks;
	int64_t timer_at_ns; /* -1: no curl timer */
};

static pthread_once_t http_once = PTHREAD_ONCE_INIT;
static CURLcode http_global_rc = CURLE_OK;

static void http_global_init(void)
{
	http_global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static int http_sock_cb(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp)
{
	(void)easy;
	(void)socketp;
	struct http_multi *m = userp;
	size_t i;
	for (i = 0; i < m->nsocks; i++)
		if (m->socks[i].fd == s)
			break;
	if (what == CURL_POLL_REMOVE) {
		if (i < m->nsocks)
			m->socks[i] = m->socks[--m->nsocks];
		return 0;
	}
	if (i == m->nsocks) {
		if (m->nsocks == m->capsocks) {
			m->capsocks = m->capsocks ? 2 * m->capsocks : 8;
			m->socks = xrealloc(m->socks, m->capsocks * sizeof(*m->socks));
		}
		m->nsocks++;
	}
	m->socks[i].fd = s;
	m->socks[i].what = what;
	return 0;
}

static int http_timer_cb(CURLM *multi, long timeout_ms, void *userp)
{
	(void)multi;
	struct http_multi *m = userp;
	m->timer_at_ns = timeout_ms < 0 ? -1 : util_mono_ns() + (int64_t)timeout_ms * 1000000;
	return 0;
}

int http_multi_new(struct http_multi **out, char **err)
{
	pthread_once(&http_once, http_global_init);
	if (http_global_rc != CURLE_OK)
		return err_set(err, "cannot initialise libcurl: %s",
			       curl_easy_strerror(http_global_rc));
	struct http_multi *m = xcalloc(1, sizeof(*m));
	m->multi = curl_multi_init();
	if (!m->multi) {
		free(m);
		return err_set(err, "cannot initialise libcurl's multi interface");
	}
	m->timer_at_ns = -1;
	curl_multi_setopt(m->multi, CURLMOPT_SOCKETFUNCTION, http_sock_cb);
	curl_multi_setopt(m->multi, CURLMOPT_SOCKETDATA, m);
	curl_multi_setopt(m->multi, CURLMOPT_TIMERFUNCTION, http_timer_cb);
	curl_multi_setopt(m->multi, CURLMOPT_TIMERDATA, m);
	*out = m;
	return 0;
}

static void http_req_free(struct http_req *r)
{
	if (r->easy)
		curl_easy_cleanup(r->easy);
	curl_slist_free_all(r->hdrs);
	free(r->url);
	free(r->body);
	free(r->method);
	free(r);
}

/* Unlinks r, detaches it from curl, reports res and frees it. */
static void http_req_finish(struct http_req *r, const struct http_result *res)
{
	struct http_multi *m = r->m;
	for (struct http_req **pp = &m->reqs; *pp; pp = &(*pp)->next)
		if (*pp == r) {
			*pp = r->next;
			break;
		}
	if (r->started)
		curl_multi_remove_handle(m->multi, r->easy);
	if (r->o.on_done)
		r->o.on_done(r->o.ctx, res);
	http_req_free(r);
}

static void http_req_cancel(struct http_req *r)
{
	struct http_result res = { .outcome = HTTP_CANCELLED, .status = r->hdr_status,
				   .error = "" };
	http_req_finish(r, &res);
}

void http_multi_free(struct http_multi **mp)
{
	struct http_multi *m = *mp;
	if (!m)
		return;
	while (m->reqs)
		http_req_cancel(m->reqs);
	curl_multi_cleanup(m->multi);
	free(m->socks);
	free(m);
	*mp = NULL;
}

static bool http_req_cancelling(const struct http_req *r)
{
	return r->cancelled || (r->o.cancel && *r->o.cancel);
}

static size_t http_write_cb(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct http_req *r = userdata;
	size_t n = size * nmemb;
	if (http_req_cancelling(r)) {
		r->cancelled = true;
		return 0;
	}
	long status = 0;
	curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &status);
	if (r->o.on_data && r->o.on_data(r->o.ctx, status, ptr, n) < 0) {
		r->aborted = true;
		return 0;
	}
	return n;
}

static size_t http_header_cb(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct http_req *r = userdata;
	size_t n = size * nmemb;
	const char *s = ptr, *end = ptr + n;
	while (end > s && (end[-1] == '\n' || end[-1] == '\r'))
		end--;
	if (end - s >= 5 && !memcmp(s, "HTTP/", 5)) {
		const char *sp = memchr(s, ' ', (size_t)(end - s));
		r->hdr_status = sp ? strtol(sp + 1, NULL, 10) : 0;
		return n;
	}
	/* Headers of interim (1xx) responses are not the answer's. */
	if (r->hdr_status < 200 || !r->o.on_header)
		return n;
	const char *colon = memchr(s, ':', (size_t)(end - s));
	if (!colon)
		return n;
	const char *v = colon + 1;
	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	const char *ve = end;
	while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
		ve--;
	if (r->o.on_header(r->o.ctx, s, (size_t)(colon - s), v, (size_t)(ve - v)) < 0) {
		r->aborted = true;
		return 0;
	}
	return n;
}

static int http_progress_cb(void *clientp, curl_off_t dltotal, curl_off_t dlnow,
			    curl_off_t ultotal, curl_off_t ulnow)
{
	(void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
	struct http_req *r = clientp;
	if (http_req_cancelling(r)) {
		r->cancelled = true;
		return 1;
	}
	return 0;
}

int http_multi_start(struct http_multi *m, const struct http_request_opts *o, char **err)
{
	if (!o->url || !*o->url)
		return err_set(err, "no URL");
	if (o->method && (!*o->method || strspn(o->method, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") !=
						 strlen(o->method)))
		return err_set(err, "invalid HTTP method \"%.20s\"", o->method);
	struct http_req *r = xcalloc(1, sizeof(*r));
	r->m = m;
	r->o = *o;
	r->url = xstrdup(o->url);
	r->o.url = r->url;
	if (o->body) {
		r->body = xmalloc(o->body_len + 1);
		memcpy(r->body, o->body, o->body_len);
		r->body[o->body_len] = '\0';
		r->o.body = r->body;
	}
	r->o.headers = NULL;
	if (o->method) {
		r->method = xstrdup(o->method);
		r->o.method = r->method;
	}
	/* No "Expect: 100-continue" round trip for larger bodies. */
	struct curl_slist *h = curl_slist_append(NULL, "Expect:");
	for (const char *const *p = o->headers; h && p && *p; p++) {
		struct curl_slist *nh = curl_slist_append(h, *p);
		if (!nh) {
			curl_slist_free_all(h);
			h = NULL;
		}
		h = nh;
	}
	r->hdrs = h;
	r->easy = curl_easy_init();
	if (!r->easy || !r->hdrs) {
		http_req_free(r);
		return err_set(err, "cannot set up an HTTP request");
	}
	CURL *e = r->easy;
	CURLcode c = CURLE_OK;
#define HTTP_SET(opt, val) do { if (c == CURLE_OK) c = curl_easy_setopt(e, opt, val); } while (0)
	HTTP_SET(CURLOPT_URL, r->url);
	HTTP_SET(CURLOPT_PROTOCOLS_STR, "http,https");
	HTTP_SET(CURLOPT_FOLLOWLOCATION, 0L);
	HTTP_SET(CURLOPT_NOSIGNAL, 1L);
	HTTP_SET(CURLOPT_PRIVATE, r);
	HTTP_SET(CURLOPT_ERRORBUFFER, r->errbuf);
	HTTP_SET(CURLOPT_HTTPHEADER, r->hdrs);
	HTTP_SET(CURLOPT_USERAGENT, "madf/" MADF_VERSION);
	HTTP_SET(CURLOPT_WRITEFUNCTION, http_write_cb);
	HTTP_SET(CURLOPT_WRITEDATA, r);
	HTTP_SET(CURLOPT_HEADERFUNCTION, http_header_cb);
	HTTP_SET(CURLOPT_HEADERDATA, r);
	HTTP_SET(CURLOPT_XFERINFOFUNCTION, http_progress_cb);
	HTTP_SET(CURLOPT_XFERINFODATA, r);
	HTTP_SET(CURLOPT_NOPROGRESS, 0L);
	if (o->timeout_ms > 0)
		HTTP_SET(CURLOPT_TIMEOUT_MS, o->timeout_ms);
	if (o->connect_timeout_ms > 0)
		HTTP_SET(CURLOPT_CONNECTTIMEOUT_MS, o->connect_timeout_ms);
	if (r->body) {
		HTTP_SET(CURLOPT_POSTFIELDS, r->body);
		HTTP_SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)o->body_len);
	}
	if (r->method && !strcmp(r->method, "HEAD"))
		HTTP_SET(CURLOPT_NOBODY, 1L);
	else if (r->method)
		HTTP_SET(CURLOPT_CUSTOMREQUEST, r->method);
#undef HTTP_SET
	if (c != CURLE_OK) {
		http_req_free(r);
		return err_set(err, "cannot set up an HTTP request: %s", curl_easy_strerror(c));
	}
	r->next = m->reqs;
	m->reqs = r;
	return 0;
}

size_t http_multi_fds(struct http_multi *m, struct pollfd *fds, size_t max)
{
	for (size_t i = 0; i < m->nsocks && i < max; i++) {
		fds[i].fd = m->socks[i].fd;
		fds[i].events = 0;
		fds[i].revents = 0;
		if (m->socks[i].what & CURL_POLL_IN)
			fds[i].events |= POLLIN;
		if (m->socks[i].what & CURL_POLL_OUT)
			fds[i].events |= POLLOUT;
	}
	return m->nsocks;
}

int http_multi_timeout(struct http_multi *m)
{
	if (!m->reqs)
		return -1;
	int64_t now = util_mono_ns(), at = m->timer_at_ns;
	for (struct http_req *r = m->reqs; r; r = r->next) {
		if (http_req_cancelling(r))
			return 0;
		if (!r->started && (at < 0 || r->o.start_at_ns < at))
			at = r->o.start_at_ns;
	}
	if (at < 0)
		return -1;
	if (at <= now)
		return 0;
	int64_t ms = (at - now + 999999) / 1000000;
	return ms > 60000 ? 60000 : (int)ms;
}

static void http_multi_read_done(struct http_multi *m)
{
	CURLMsg *msg;
	int left;
	while ((msg = curl_multi_info_read(m->multi, &left))) {
		if (msg->msg != CURLMSG_DONE)
			continue;
		struct http_req *r = NULL;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&r);
		if (!r)
			continue;
		CURLcode code = msg->data.result;
		struct http_result res = { .error = "" };
		curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &res.status);
		if (code == CURLE_OK) {
			res.outcome = HTTP_DONE;
		} else if (http_req_cancelling(r)) {
			res.outcome = HTTP_CANCELLED;
		} else if (r->aborted) {
			res.outcome = HTTP_ABORTED;
		} else {
			res.outcome = HTTP_FAILED;
			res.timed_out = code == CURLE_OPERATION_TIMEDOUT;
			res.error = r->errbuf[0] ? r->errbuf : curl_easy_strerror(code);
		}
		http_req_finish(r, &res);
	}
}

void http_multi_dispatch(struct http_multi *m, const struct pollfd *fds, size_t n)
{
	int running;
	for (size_t i = 0; i < n; i++) {
		if (!fds[i].revents)
			continue;
		int ev = 0;
		if (fds[i].revents & (POLLIN | POLLHUP))
			ev |= CURL_CSELECT_IN;
		if (fds[i].revents & POLLOUT)
			ev |= CURL_CSELECT_OUT;
		if (fds[i].revents & (POLLERR | POLLNVAL))
			ev |= CURL_CSELECT_ERR;
		curl_multi_socket_action(m->multi, fds[i].fd, ev, &running);
	}
	if (m->timer_at_ns >= 0 && util_mono_ns() >= m->timer_at_ns) {
		m->timer_at_ns = -1;
		curl_multi_socket_action(m->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	}
	http_multi_read_done(m);
	/* Cancellations and due starts; on_done may queue new requests, so
	 * scan again from the head after each change. */
	for (bool again = true; again;) {
		again = false;
		int64_t now = util_mono_ns();
		for (struct http_req *r = m->reqs; r; r = r->next) {
			if (http_req_cancelling(r)) {
				http_req_cancel(r);
				again = true;
				break;
			}
			if (!r->started && r->o.start_at_ns <= now) {
				CURLMcode mc = curl_multi_add_handle(m->multi, r->easy);
				if (mc != CURLM_OK) {
					struct http_result res = {
						.outcome = HTTP_FAILED,
						.error = curl_multi_strerror(mc),
					};
					http_req_finish(r, &res);
				} else {
					r->started = true;
				}
				again = true;
				break;
			}
		}
	}
	if (m->timer_at_ns >= 0 && util_mono_ns() >= m->timer_at_ns) {
		m->timer_at_ns = -1;
		curl_multi_socket_action(m->multi, CURL_SOCKET_TIMEOUT, 0, &running);
		http_multi_read_done(m);
	}
}

size_t http_multi_pending(const struct http_multi *m)
{
	size_t n = 0;
	for (const struct http_req *r = m->reqs; r; r = r->next)
		n++;
	return n;
}

int http_multi_run(struct http_multi *m, char **err)
{
	struct pollfd *fds = NULL;
	size_t cap = 0;
	int rc = 0;
	while (m->reqs) {
		size_t n = http_multi_fds(m, fds, cap);
		if (n > cap) {
			cap = n;
			fds = xrealloc(fds, cap * sizeof(*fds));
			n = http_multi_fds(m, fds, cap);
		}
		int t = http_multi_timeout(m);
		/* Wake at least once a second to notice a cancel flag. */
		if (t < 0 || t > 1000)
			t = 1000;
		int r = poll(fds, n, t);
		if (r < 0 && errno != EINTR) {
			rc = err_set(err, "poll: %s", strerror(errno));
			break;
		}
		http_multi_dispatch(m, fds, r > 0 ? n : 0);
	}
	free(fds);
	return rc;
}
