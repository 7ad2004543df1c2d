/* The NATS JetStream transport: connection, streams and consuming.
 * Publishing is in bus_nats_publish.c; listing and edits in
 * bus_nats_admin.c, counts in bus_nats_monitor.c. See
 * core/bus_nats.h for the mapping. */
#include "core/bus_nats.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "core/bus_drop.h"
#include "core/util.h"
#include "core/banned.h"

#define NS_PER_MS 1000000LL
#define NS_PER_S 1000000000LL
#define API_WAIT_MS 5000
/* The stream's MaxMsgSize counts headers too. */
#define HEADER_ROOM (64 * 1024)

/* The priority levels' tokens in consumer and subject names. */
const char *const nats_prio_tok[4] = { "urgent", "high", "normal", "low" };

bool bus_nats_url(const char *url)
{
	return url && (!strncmp(url, "nats://", 7) || !strncmp(url, "tls://", 6));
}

void nats_stream_name(const struct natsbus *nb, const char *agent, char *buf,
		      size_t size)
{
	snprintf(buf, size, "%s_in_%s", nb->prefix, agent);
}

void nats_dlq_stream(const struct natsbus *nb, char *buf, size_t size)
{
	snprintf(buf, size, "%s_dlq", nb->prefix);
}

void nats_drop_stream(const struct natsbus *nb, char *buf, size_t size)
{
	snprintf(buf, size, "%s_drop", nb->prefix);
}

static void att_stream(const struct natsbus *nb, char *buf, size_t size)
{
	snprintf(buf, size, "%s_att", nb->prefix);
}

/* Replaces every occurrence of secret in *s by "[redacted]". */
static void redact(char **s, const char *secret)
{
	if (!secret || !*secret)
		return;
	char *hit;
	while ((hit = strstr(*s, secret))) {
		char *t = xasprintf("%.*s[redacted]%s", (int)(hit - *s), *s,
				    hit + strlen(secret));
		free(*s);
		*s = t;
	}
}

int nats_fail(struct natsbus *nb, char **err, natsStatus s, jsErrCode jerr,
	      const char *fmt, ...)
{
	if (!err)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	char *what = xvasprintf(fmt, ap);
	va_end(ap);
	const char *last = s != NATS_OK ? nats_GetLastError(NULL) : NULL;
	/* "(conn.c:2088): text": the text alone, and only when it adds to
	 * the status */
	if (last && *last == '(' && strstr(last, "): "))
		last = strstr(last, "): ") + 3;
	if (last && !strcmp(last, natsStatus_GetText(s)))
		last = NULL;
	char *msg;
	if (s == NATS_OK)
		msg = what;
	else {
		msg = xasprintf("%s: %s%s%s%s", what, natsStatus_GetText(s),
				last && *last ? " (" : "", last && *last ? last : "",
				last && *last ? ")" : "");
		free(what);
	}
	if (jerr) {
		char *t = xasprintf("%s [JetStream error %d]", msg, (int)jerr);
		free(msg);
		msg = t;
	}
	for (char *p = msg; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	if (nb) {
		redact(&msg, nb->secret);
		redact(&msg, nb->user);
	}
	free(*err);
	*err = msg;
	return -1;
}

/* ---- connecting ------------------------------------------------------- */

static int prefix_valid(const char *p)
{
	size_t n = strlen(p);
	if (n == 0 || n > NATS_PREFIX_MAX)
		return 0;
	for (const char *c = p; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '_' || *c == '-'))
			return 0;
	return 1;
}

/* Splits "scheme://[user[:pass]@]host:port[,host:port...]" into full server
 * URLs (each with the scheme, without the user), the shown form, and the
 * user and password (nb->user, nb->secret) or the token (nb->user alone),
 * percent-decoded as RFC 3986 writes userinfo (p%40ss is "p@ss"; ':' is
 * %3A, '%' is %25): bus_nats_open gives them to the connection's options.
 * A bad escape is an error naming the part, never quoting it. */
int nats_url_split(struct natsbus *nb, const char *url, char ***servers,
		     int *n, char **err)
{
	const char *sep = strstr(url, "://");
	char *scheme = xstrndup(url, (size_t)(sep - url));
	const char *rest = sep + 3;
	const char *comma = strchr(rest, ',');
	const char *first_end = comma ? comma : rest + strlen(rest);
	const char *at = memchr(rest, '@', (size_t)(first_end - rest));
	*servers = NULL;
	*n = 0;
	if (at) {
		const char *colon = memchr(rest, ':', (size_t)(at - rest));
		const char *uend = colon ? colon : at;
		char *derr = NULL;
		const char *part = colon ? "user name" : "token";
		int r = util_pct_decode(rest, (size_t)(uend - rest), &nb->user, &derr);
		if (r == 0 && colon) {
			part = "password";
			r = util_pct_decode(colon + 1, (size_t)(at - colon - 1), &nb->secret, &derr);
		}
		if (r < 0) {
			err_set(err, "invalid %s in the bus URL: %s", part, derr);
			free(derr);
			free(scheme);
			nb->where = xstrdup("");
			return -1;
		}
		rest = at + 1;
	}
	struct sbuf shown;
	sbuf_init(&shown);
	char *list = xstrdup(rest);
	char *save = NULL;
	int r = 0;
	for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		const char *hp = tok;
		const char *ts = strstr(tok, "://");
		if (ts)
			hp = ts + 3;
		if (!*hp || strchr(hp, '@') || strchr(hp, '/')) {
			/* shown on a terminal: the URL's control bytes stripped */
			char *clean = util_sanitize(hp, strlen(hp), false);
			r = err_set(err, "invalid NATS server \"%s\" in the bus URL: "
					 "expected host:port%s", strchr(hp, '@') ? "user@..." : clean,
				    strchr(hp, '@') ? " (in a user name or password, '@' is "
						      "written %40, ':' %3A and '%' %25)" : "");
			free(clean);
			break;
		}
		*servers = xrealloc(*servers, sizeof(**servers) * (size_t)(*n + 1));
		(*servers)[(*n)++] = xasprintf("%s://%s", scheme, hp);
		sbuf_addf(&shown, "%s%s://%s", *n > 1 ? "," : "", scheme, hp);
	}
	if (r == 0 && *n == 0)
		r = err_set(err, "the bus URL names no NATS server");
	free(list);
	free(scheme);
	nb->where = sbuf_detach(&shown);
	return r;
}

/* MADF_NATS_REPLICAS: 1 (one server) to 5; 3 in a cluster. */
int64_t nats_replicas(void)
{
	const char *r = getenv("MADF_NATS_REPLICAS");
	long v = r && *r ? strtol(r, NULL, 10) : 1;
	return v >= 1 && v <= 5 ? v : 1;
}

int nats_add_stream(struct natsbus *nb, jsStreamConfig *sc, char **err)
{
	jsErrCode jerr = 0;
	natsStatus s = NATS_OK;
	/* Asked again while the answer says "wait": another process creating
	 * the same stream at this moment ("subjects overlap", 10065, until
	 * that creation is done; or, on a cluster, "stream not found", 10059:
	 * the server answers a create whose stream it has placed already with
	 * that stream's info, not found until a replica runs it, as seen right
	 * after a node restarted; then ours finds it there, OK, or 10058
	 * below), or a cluster electing a leader (a node just died: a timeout,
	 * no responders or 10008, nats_transient). For up to
	 * MADF_NATS_ELECTION_S, as a publish is. */
	int64_t until = nats_retry_until(nb);
	for (int i = 0;; i++) {
		jsStreamInfo *si = NULL;
		jerr = 0;
		s = js_AddStream(&si, nb->js, sc, NULL, &jerr);
		if (s != NATS_OK && jerr == 10058) {
			/* exists with another configuration (another limit); not
			 * found (10059) if it went meanwhile: created again */
			jsStreamInfo_Destroy(si);
			si = NULL;
			jerr = 0;
			s = js_UpdateStream(&si, nb->js, sc, NULL, &jerr);
		}
		jsStreamInfo_Destroy(si);
		if (s == NATS_OK)
			break;
		bool busy = jerr == 10065 || jerr == 10059;
		if (busy ? !nats_retry_wait(until, i) : !nats_retry_again(s, jerr, until, i))
			break;
	}
	if (s != NATS_OK)
		return nats_fail(nb, err, s, jerr, "cannot set up the NATS stream %s",
				 sc->Name);
	return 0;
}

int nats_add_record_stream(struct natsbus *nb, const char *name, const char *subj,
			   int max_age_days, int64_t max_msgs, int32_t max_size, char **err)
{
	const char *subs[] = { subj };
	jsStreamConfig sc;
	jsStreamConfig_Init(&sc);
	sc.Name = name;
	sc.Subjects = subs;
	sc.SubjectsLen = 1;
	sc.Retention = js_LimitsPolicy;
	sc.Storage = js_FileStorage;
	sc.MaxAge = (int64_t)max_age_days * 86400 * NS_PER_S;
	if (max_msgs > 0)
		sc.MaxMsgs = max_msgs;
	sc.MaxMsgSize = max_size;
	sc.AllowDirect = true;
	sc.Replicas = nats_replicas();
	return nats_add_stream(nb, &sc, err);
}
/* TLS and credentials from the environment: tls:// asks for TLS; NATS_CA
 * names the PEM file of the CAs that sign the server's certificate (else
 * the system's), NATS_CERT and NATS_KEY a client certificate and its key
 * (for servers that verify clients), NATS_CREDS a user credentials file
 * (JWT and NKey seed, as nsc writes it). Each file is read now, so that a
 * missing or bad one is said, by its variable, before connecting. */
static int secure_setup(struct natsbus *nb, const char *url, char **err)
{
	const char *ca = getenv("NATS_CA"), *cert = getenv("NATS_CERT");
	const char *key = getenv("NATS_KEY"), *creds = getenv("NATS_CREDS");
	natsStatus s = NATS_OK;
	if (!strncmp(url, "tls://", 6) && (s = natsOptions_SetSecure(nb->opts, true)) != NATS_OK)
		return nats_fail(nb, err, s, 0, "cannot set up TLS for %s", nb->where);
	/* each file readable first: the library's error would not say why */
	const char *const vars[] = { "NATS_CA", "NATS_CERT", "NATS_KEY", "NATS_CREDS" };
	const char *const files[] = { ca, cert, key, creds };
	for (size_t i = 0; i < ARRAY_SIZE(files); i++)
		if (files[i] && *files[i] && access(files[i], R_OK) < 0)
			return err_set(err, "cannot read %s=%s: %s", vars[i], files[i],
				       strerror(errno));
	if (ca && *ca && (s = natsOptions_LoadCATrustedCertificates(nb->opts, ca)) != NATS_OK)
		return nats_fail(nb, err, s, 0, "cannot load the CA certificates NATS_CA=%s", ca);
	if ((cert && *cert) != (key && *key))
		return err_set(err, "NATS_CERT and NATS_KEY go together (a client certificate "
				    "and its key): only %s is set", cert && *cert ? "NATS_CERT" : "NATS_KEY");
	if (cert && *cert && (s = natsOptions_LoadCertificatesChain(nb->opts, cert, key)) != NATS_OK)
		return nats_fail(nb, err, s, 0, "cannot load the client certificate NATS_CERT=%s "
				 "with its key NATS_KEY=%s", cert, key);
	if (creds && *creds &&
	    (s = natsOptions_SetUserCredentialsFromFiles(nb->opts, creds, NULL)) != NATS_OK)
		return nats_fail(nb, err, s, 0, "cannot use the credentials NATS_CREDS=%s", creds);
	return 0;
}

int bus_nats_open(struct bus *b, char **err)
{
	struct natsbus *nb = xcalloc(1, sizeof(*nb));
	pthread_mutex_init(&nb->lock, NULL);
	b->impl = nb;
	const char *pfx = getenv("MADF_NATS_PREFIX");
	if (!pfx || !*pfx)
		pfx = "madf";
	if (!prefix_valid(pfx)) {
		pthread_mutex_destroy(&nb->lock);
		free(nb);
		b->impl = NULL;
		return err_set(err, "invalid MADF_NATS_PREFIX \"%s\": 1 to %d of "
				    "[A-Za-z0-9_-]", pfx, NATS_PREFIX_MAX);
	}
	util_strlcpy(nb->prefix, pfx, sizeof(nb->prefix));
	if (nats_election_setup(nb, err) < 0) {
		pthread_mutex_destroy(&nb->lock);
		free(nb);
		b->impl = NULL;
		return -1;
	}
	char **servers = NULL;
	int n = 0;
	int r = nats_url_split(nb, b->cfg.url, &servers, &n, err);
	natsStatus s = NATS_OK;
	if (r == 0) {
		s = natsOptions_Create(&nb->opts);
		const char **sv = xcalloc((size_t)n, sizeof(*sv));
		for (int i = 0; i < n; i++)
			sv[i] = servers[i];
		if (s == NATS_OK)
			s = natsOptions_SetServers(nb->opts, sv, n);
		free(sv);
		/* the URL's credentials, decoded (nats_url_split), for every server */
		if (s == NATS_OK && nb->user && nb->secret)
			s = natsOptions_SetUserInfo(nb->opts, nb->user, nb->secret);
		else if (s == NATS_OK && nb->user)
			s = natsOptions_SetToken(nb->opts, nb->user);
		if (s == NATS_OK)
			s = natsOptions_SetTimeout(nb->opts, 2000);
		if (s == NATS_OK)
			s = natsOptions_SetName(nb->opts, "madf");
		/* Reply subjects of our own: the library's random inbox names
		 * repeat in processes started at the same moment (madf bench
		 * bus forks two), and then one process's pull replies reach
		 * the other's pending requests. */
		if (s == NATS_OK) {
			uint64_t rnd = 0;
			util_random(&rnd, sizeof(rnd));
			char ibx[64];
			snprintf(ibx, sizeof(ibx), "_INBOX.m%ldx%016llx", (long)getpid(),
				 (unsigned long long)rnd);
			s = natsOptions_SetCustomInboxPrefix(nb->opts, ibx);
		}
		if (s == NATS_OK)
			s = natsOptions_SetReconnectBufSize(nb->opts, 32 * 1024 * 1024);
		/* an agent outlives a server restart or a leader election */
		if (s == NATS_OK)
			s = natsOptions_SetMaxReconnect(nb->opts, -1);
		if (s != NATS_OK)
			r = nats_fail(nb, err, s, 0, "cannot configure the NATS connection "
				      "to %s", nb->where);
		else
			r = secure_setup(nb, b->cfg.url, err);
	}
	for (int i = 0; i < n; i++)
		free(servers[i]);
	free(servers);
	if (r == 0 && (s = natsConnection_Connect(&nb->nc, nb->opts)) != NATS_OK) {
		r = nats_fail(nb, err, s, 0, "cannot connect to the NATS bus at %s",
			      nb->where);
		const char *ca = getenv("NATS_CA");
		if (err && s == NATS_CONNECTION_AUTH_FAILED) {
			char *t = xasprintf("%s; check the user and password (or token) in the "
					    "bus URL, or NATS_CREDS", *err);
			free(*err);
			*err = t;
		} else if (err && s == NATS_SSL_ERROR) {
			char *t = ca && *ca ? xasprintf("%s; is NATS_CA=%s the CA that signed the "
							"server's certificate?", *err, ca)
					    : xasprintf("%s; NATS_CA names the file of the CA that "
							"signed the server's certificate", *err);
			free(*err);
			*err = t;
		} else if (err && s == NATS_PROTOCOL_ERROR && !strncmp(b->cfg.url, "tls://", 6) &&
			   !(getenv("NATS_CERT") && *getenv("NATS_CERT"))) {
			/* a server that verifies clients closes at the handshake */
			char *t = xasprintf("%s; if the server verifies clients, NATS_CERT and "
					    "NATS_KEY name a client certificate and its key", *err);
			free(*err);
			*err = t;
		}
	}
	jsOptions jo;
	jsOptions_Init(&jo);
	jo.Wait = API_WAIT_MS;
	if (r == 0 && (s = natsConnection_JetStream(&nb->js, nb->nc, &jo)) != NATS_OK)
		r = nats_fail(nb, err, s, 0, "cannot use JetStream at %s", nb->where);
	if (r == 0) {
		char name[NATS_NAME_MAX], subj[NATS_NAME_MAX];
		jsStreamConfig sc;
		jsStreamConfig_Init(&sc);
		nats_dlq_stream(nb, name, sizeof(name));
		snprintf(subj, sizeof(subj), "%s.dlq.*", nb->prefix);
		const char *subs[] = { subj };
		sc.Name = name;
		sc.Subjects = subs;
		sc.SubjectsLen = 1;
		sc.Retention = js_LimitsPolicy;
		sc.Storage = js_FileStorage;
		sc.MaxAge = 30LL * 86400 * NS_PER_S;
		sc.MaxMsgSize = (int32_t)(b->cfg.max_bytes + HEADER_ROOM);
		sc.AllowDirect = true;
		sc.Replicas = nats_replicas();
		r = nats_add_stream(nb, &sc, err);
		if (r == 0) {
			att_stream(nb, name, sizeof(name));
			snprintf(subj, sizeof(subj), "%s.att.>", nb->prefix);
			sc.Name = name;
			sc.MaxMsgsPerSubject = 10;
			sc.MaxMsgSize = 64 * 1024;
			r = nats_add_stream(nb, &sc, err);
		}
		if (r == 0) {
			/* expired heartbeats dropped: one record each (the
			 * newest kept); the count is the last sequence */
			jsStreamConfig_Init(&sc);
			nats_drop_stream(nb, name, sizeof(name));
			snprintf(subj, sizeof(subj), "%s.dropped.*", nb->prefix);
			sc.Name = name;
			sc.Subjects = subs;
			sc.SubjectsLen = 1;
			sc.Retention = js_LimitsPolicy;
			sc.Storage = js_FileStorage;
			sc.MaxMsgs = DROP_KEEP;
			sc.MaxMsgSize = 64 * 1024;
			sc.Replicas = nats_replicas();
			r = nats_add_stream(nb, &sc, err);
		}
	}
	char host[64] = "";
	gethostname(host, sizeof(host) - 1);
	snprintf(nb->owner, sizeof(nb->owner), "%.60s-%ld", host, (long)getpid());
	if (r < 0)
		b->t->close(b);
	return r;
}

static void nats_close(struct bus *b)
{
	struct natsbus *nb = NB(b);
	if (!nb)
		return;
	if (nb->js && atomic_load(&nb->log_sent)) {
		/* log lines published asynchronously: stored before we go */
		jsPubOptions po;
		jsPubOptions_Init(&po);
		po.MaxWait = API_WAIT_MS;
		js_PublishAsyncComplete(nb->js, &po);
	}
	jsCtx_Destroy(nb->js);
	if (nb->nc) {
		natsConnection_Flush(nb->nc);
		natsConnection_Close(nb->nc);
	}
	for (struct nats_bell *bl = nb->bells, *next; bl; bl = next) {
		next = bl->next;
		natsSubscription_Destroy(bl->sub);
		close(bl->efd);
		free(bl);
	}
	natsConnection_Destroy(nb->nc);
	natsOptions_Destroy(nb->opts);
	/* No nats_Close(): buses open and close again in one process (the
	 * console, mcp), and the library may not open again right after a
	 * close; what it keeps is freed at exit. */
	for (size_t i = 0; i < nb->nensured; i++)
		free(nb->ensured[i]);
	free(nb->ensured);
	for (size_t i = 0; i < nb->nlogs; i++)
		free(nb->logs[i]);
	free(nb->logs);
	free(nb->where);
	free(nb->secret);
	free(nb->user);
	pthread_mutex_destroy(&nb->lock);
	free(nb);
	b->impl = NULL;
}

/* ---- streams ---------------------------------------------------------- */

int nats_ensure_inbox(struct bus *b, const char *agent, char **err)
{
	struct natsbus *nb = NB(b);
	bool known = false;
	pthread_mutex_lock(&nb->lock);
	for (size_t i = 0; i < nb->nensured && !known; i++)
		known = !strcmp(nb->ensured[i], agent);
	pthread_mutex_unlock(&nb->lock);
	if (known)
		return 0;
	char name[NATS_NAME_MAX], subj[NATS_NAME_MAX];
	char bsrc[NATS_NAME_MAX], bdst[NATS_NAME_MAX];
	nats_stream_name(nb, agent, name, sizeof(name));
	snprintf(subj, sizeof(subj), "%s.inbox.%s.*", nb->prefix, agent);
	snprintf(bsrc, sizeof(bsrc), "%s.inbox.%s.>", nb->prefix, agent);
	snprintf(bdst, sizeof(bdst), "%s.bell.%s.>", nb->prefix, agent);
	jsRePublish rp = { .Source = bsrc, .Destination = bdst, .HeadersOnly = true };
	const char *subs[] = { subj };
	jsStreamConfig sc;
	jsStreamConfig_Init(&sc);
	sc.Name = name;
	sc.Subjects = subs;
	sc.SubjectsLen = 1;
	sc.Retention = js_WorkQueuePolicy;
	/* MADF_NATS_STORAGE=memory: inboxes in the server's memory (lost
	 * with it; madf bench bus measures both) */
	const char *stg = getenv("MADF_NATS_STORAGE");
	sc.Storage = stg && !strcmp(stg, "memory") ? js_MemoryStorage : js_FileStorage;
	sc.MaxMsgs = (int64_t)b->cfg.inbox_limit;
	sc.Discard = js_DiscardNew;
	sc.MaxMsgSize = (int32_t)(b->cfg.max_bytes + HEADER_ROOM);
	sc.AllowDirect = true;
	sc.Replicas = nats_replicas();
	sc.RePublish = &rp;
	if (nats_add_stream(nb, &sc, err) < 0)
		return -1;
	for (int p = 0; p < 4; p++) {
		char durable[NATS_NAME_MAX], filter[NATS_NAME_MAX];
		snprintf(durable, sizeof(durable), "%s_%s", agent, nats_prio_tok[p]);
		snprintf(filter, sizeof(filter), "%s.inbox.%s.%s", nb->prefix, agent,
			 nats_prio_tok[p]);
		jsConsumerConfig cc;
		jsConsumerConfig_Init(&cc);
		cc.Durable = durable;
		cc.FilterSubject = filter;
		cc.AckPolicy = js_AckExplicit;
		cc.DeliverPolicy = js_DeliverAll;
		cc.AckWait = b->cfg.lease_s * NS_PER_S;
		cc.MaxDeliver = b->cfg.max_attempts + 1;
		cc.MaxAckPending = (int64_t)b->cfg.inbox_limit + 1000;
		jsErrCode jerr = 0;
		natsStatus s = NATS_OK;
		int64_t until = nats_retry_until(nb);
		for (int i = 0;; i++) {
			jsConsumerInfo *ci = NULL;
			jerr = 0;
			s = js_AddConsumer(&ci, nb->js, name, &cc, NULL, &jerr);
			if (s != NATS_OK && !nats_transient(s, jerr)) {
				/* exists with another lease or attempt limit */
				jsConsumerInfo_Destroy(ci);
				ci = NULL;
				jerr = 0;
				s = js_UpdateConsumer(&ci, nb->js, name, &cc, NULL, &jerr);
			}
			jsConsumerInfo_Destroy(ci);
			/* the stream or the consumer electing a leader */
			if (!nats_retry_again(s, jerr, until, i))
				break;
		}
		if (s != NATS_OK)
			return nats_fail(nb, err, s, jerr, "cannot set up the NATS consumer "
					 "%s of %s", durable, name);
	}
	pthread_mutex_lock(&nb->lock);
	nb->ensured = xrealloc(nb->ensured, sizeof(*nb->ensured) * (nb->nensured + 1));
	nb->ensured[nb->nensured++] = xstrdup(agent);
	pthread_mutex_unlock(&nb->lock);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int nats_agents(struct bus *b, char ***out, size_t *n, char **err)
{
	struct natsbus *nb = NB(b);
	for (size_t i = 0; i < bus_default_agent_count; i++)
		if (nats_ensure_inbox(b, bus_default_agents[i], err) < 0)
			return -1;
	jsStreamNamesList *list = NULL;
	jsErrCode jerr = 0;
	natsStatus s = NATS_OK;
	int64_t until = nats_retry_until(nb);
	for (int i = 0;; i++) {
		jerr = 0;
		s = js_StreamNames(&list, nb->js, NULL, &jerr);
		if (!nats_retry_again(s, jerr, until, i))
			break;
	}
	if (s != NATS_OK && s != NATS_NOT_FOUND)
		return nats_fail(nb, err, s, jerr, "cannot list the NATS streams");
	char pfx[NATS_NAME_MAX];
	int pl = snprintf(pfx, sizeof(pfx), "%s_in_", nb->prefix);
	char **v = NULL;
	size_t k = 0;
	for (int i = 0; list && i < list->Count; i++) {
		const char *nm = list->List[i];
		if (strncmp(nm, pfx, (size_t)pl) || !util_valid_agent_name(nm + pl))
			continue;
		v = xrealloc(v, sizeof(*v) * (k + 1));
		v[k++] = xstrdup(nm + pl);
	}
	jsStreamNamesList_Destroy(list);
	if (k)
		qsort(v, k, sizeof(*v), cmp_str);
	*out = v;
	*n = k;
	return 0;
}

/* ---- consuming -------------------------------------------------------- */

struct bus_consumer {
	struct bus *bus; /* first, as bus.c expects */
	char *agent;
	char stream[NATS_NAME_MAX];
	struct nats_bell *bell;
};

static void bell_ring(natsConnection *nc, natsSubscription *sub, natsMsg *msg,
		      void *closure)
{
	(void)nc;
	(void)sub;
	natsMsg_Destroy(msg);
	uint64_t one = 1;
	ssize_t w = write(((struct nats_bell *)closure)->efd, &one, sizeof(one));
	(void)w; /* a full counter has rung already */
}

static int nats_consumer_open(struct bus *b, const char *agent,
			      struct bus_consumer **out, char **err)
{
	if (nats_ensure_inbox(b, agent, err) < 0)
		return -1;
	struct natsbus *nb = NB(b);
	struct nats_bell *bell = xcalloc(1, sizeof(*bell));
	bell->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (bell->efd < 0) {
		free(bell);
		return err_set(err, "cannot make an eventfd: %s", strerror(errno));
	}
	char subj[NATS_NAME_MAX];
	snprintf(subj, sizeof(subj), "%s.bell.%s.>", nb->prefix, agent);
	natsStatus s = natsConnection_Subscribe(&bell->sub, nb->nc, subj, bell_ring, bell);
	pthread_mutex_lock(&nb->lock);
	bell->next = nb->bells;
	nb->bells = bell;
	pthread_mutex_unlock(&nb->lock);
	if (s != NATS_OK)
		return nats_fail(nb, err, s, 0, "cannot subscribe to %s", subj);
	struct bus_consumer *c = xcalloc(1, sizeof(*c));
	c->bus = b;
	c->agent = xstrdup(agent);
	c->bell = bell;
	nats_stream_name(nb, agent, c->stream, sizeof(c->stream));
	*out = c;
	return 0;
}

/* An agent gone for good: its inbox stream (and its consumers) goes when
 * nothing waits in it. */
static int nats_forget(struct bus *b, const char *agent, char **err)
{
	struct natsbus *nb = NB(b);
	char name[NATS_NAME_MAX];
	nats_stream_name(nb, agent, name, sizeof(name));
	jsStreamInfo *si = NULL;
	jsErrCode jerr = 0;
	natsStatus s = NATS_OK;
	int64_t until = nats_retry_until(nb);
	for (int i = 0;; i++) {
		jerr = 0;
		s = js_GetStreamInfo(&si, nb->js, name, NULL, &jerr);
		if (!nats_retry_again(s, jerr, until, i))
			break;
	}
	if (s == NATS_NOT_FOUND || jerr == 10059) {
		jsStreamInfo_Destroy(si);
		return 0;
	}
	if (s != NATS_OK) {
		jsStreamInfo_Destroy(si);
		return nats_fail(nb, err, s, jerr, "cannot read the NATS stream %s", name);
	}
	bool empty = si->State.Msgs == 0;
	jsStreamInfo_Destroy(si);
	if (!empty)
		return 0;
	/* asked again after a timeout: "not found" then, as it went */
	until = nats_retry_until(nb);
	for (int i = 0;; i++) {
		jerr = 0;
		s = js_DeleteStream(nb->js, name, NULL, &jerr);
		if (!nats_retry_again(s, jerr, until, i))
			break;
	}
	if (s != NATS_OK && s != NATS_NOT_FOUND && jerr != 10059)
		return nats_fail(nb, err, s, jerr, "cannot delete the NATS stream %s", name);
	pthread_mutex_lock(&nb->lock);
	for (size_t i = 0; i < nb->nensured; i++)
		if (!strcmp(nb->ensured[i], agent)) {
			free(nb->ensured[i]);
			nb->ensured[i] = nb->ensured[--nb->nensured];
			break;
		}
	pthread_mutex_unlock(&nb->lock);
	return 0;
}

static void nats_consumer_free(struct bus_consumer *c)
{
	/* The bell itself goes at close: cnats 3.4.1 may crash when a
	 * subscription is destroyed during a delivery (nats.c#637). */
	natsSubscription_Unsubscribe(c->bell->sub);
	free(c->agent);
	free(c);
}

static int nats_consumer_fd(struct bus_consumer *c)
{
	return c->bell->efd;
}

/* Waits for the bell, at most the poll interval at a time: a nacked
 * message whose backoff ends, or a lease that runs out, rings nothing. */
static int nats_consumer_wait(struct bus_consumer *c, int timeout_ms)
{
	int poll_ms = (int)(c->bus->cfg.poll_interval_s * 1000);
	int ms = timeout_ms < 0 || timeout_ms > poll_ms ? poll_ms : timeout_ms;
	struct pollfd p = { .fd = c->bell->efd, .events = POLLIN };
	int k = poll(&p, 1, ms);
	if (k < 0)
		return -1;
	if (k > 0) {
		uint64_t v;
		ssize_t r = read(c->bell->efd, &v, sizeof(v));
		(void)r;
		return 1;
	}
	return timeout_ms >= 0 && ms >= timeout_ms ? 0 : 1;
}

/* The bell rings for new messages only: a backoff or a lease ending is
 * noticed by claiming again after the poll interval. */
static int nats_consumer_timeout(struct bus_consumer *c)
{
	return (int)(c->bus->cfg.poll_interval_s * 1000);
}

/* Answers a delivery on its ack subject ("+ACK", "-NAK", "+WPI") as a
 * request: the consumer's leader answers each when asked with a reply
 * subject (nats-server 2.9 "acks the ack"), so that the answer is known to
 * be taken, and a timeout or "no responders" (the consumer's leader gone)
 * is seen and asked again through the election until `until` (monotonic
 * ns). cnats 3.4.1 has a synchronous ack (natsMsg_AckSync) but no
 * synchronous nak or in-progress (natsMsg_Nak, natsMsg_NakWithDelay and
 * natsMsg_InProgress only publish); never through natsMsg_Ack* anyway:
 * the raw pull's messages crash cnats 3.4.1 there. Each answer is safe to
 * repeat: an ack is idempotent, an in-progress restarts the ack wait
 * again, and a nak taken twice (its first answer lost) only sets the same
 * redelivery again (at worst a delivery made meanwhile is redelivered:
 * at least once, as everywhere). */
static int answer(struct bus_consumer *c, const char *reply, const char *what,
		  int64_t until, char **err)
{
	struct natsbus *nb = NB(c->bus);
	natsStatus s;
	for (int i = 0;; i++) {
		natsMsg *r = NULL;
		s = natsConnection_RequestString(&r, nb->nc, reply, what, API_WAIT_MS);
		natsMsg_Destroy(r);
		if (!nats_retry_again(s, 0, until, i))
			break;
	}
	if (s != NATS_OK)
		return nats_fail(nb, err, s, 0, "cannot answer a delivery of %s (%.5s)",
				 c->agent, what);
	return 0;
}

static void att_subject(struct bus_consumer *c, uint64_t seq, char *buf, size_t size)
{
	snprintf(buf, size, "%s.att.%s.%llu", NB(c->bus)->prefix, c->agent,
		 (unsigned long long)seq);
}

/* The first failure recorded for seq (caller frees), or NULL. */
static char *att_first(struct bus_consumer *c, uint64_t seq)
{
	struct natsbus *nb = NB(c->bus);
	char subj[NATS_NAME_MAX], st[NATS_NAME_MAX];
	att_subject(c, seq, subj, sizeof(subj));
	att_stream(nb, st, sizeof(st));
	jsDirectGetMsgOptions d;
	memset(&d, 0, sizeof(d));
	d.Sequence = 1;
	d.NextBySubject = subj;
	natsMsg *m = NULL;
	if (nats_direct_get(nb, st, &d, &m) != NATS_OK)
		return NULL; /* none recorded (or not readable now) */
	char *at = xstrndup(natsMsg_GetData(m), (size_t)natsMsg_GetDataLength(m));
	natsMsg_Destroy(m);
	return at;
}

static void att_drop(struct bus_consumer *c, uint64_t seq)
{
	struct natsbus *nb = NB(c->bus);
	char subj[NATS_NAME_MAX], st[NATS_NAME_MAX];
	att_subject(c, seq, subj, sizeof(subj));
	att_stream(nb, st, sizeof(st));
	jsOptions o;
	jsOptions_Init(&o);
	o.Stream.Purge.Subject = subj;
	js_PurgeStream(nb->js, st, &o, NULL);
}

static uint64_t canon_seq(const char *canon)
{
	const char *colon = canon ? strrchr(canon, ':') : NULL;
	return colon ? strtoull(colon + 1, NULL, 10) : 0;
}

/* Dead-letters a claimed message (payload json) and takes it off the
 * inbox. */
static int claimed_dead(struct bus_consumer *c, const char *reply, uint64_t seq,
			const char *json, size_t len, const char *reason,
			const char *error, int attempts, const struct msg *m,
			const char *mid, char **err)
{
	char *first = att_first(c, seq);
	struct nats_dead dl = {
		.agent = c->agent, .reason = reason, .error = error,
		.message_id = m ? m->id : mid, .from = m ? m->from : NULL,
		.to = m ? m->to : NULL, .type = m ? msg_type_name(m->type) : NULL,
		.first_failure = first, .attempts = attempts,
	};
	char *dedup = xasprintf("dlq:%s:%llu", c->stream, (unsigned long long)seq);
	int r = nats_publish_dead(c->bus, &dl, json, len, dedup, err);
	free(dedup);
	free(first);
	if (r == 0)
		r = answer(c, reply, "+ACK", nats_retry_until(NB(c->bus)), err);
	if (r == 0)
		att_drop(c, seq);
	return r;
}

/* An expired heartbeat or system_status: recorded in the drop stream
 * (deduplicated, so that a redelivery after a crash counts once), then
 * taken off the inbox. Not a dead letter. */
static int claimed_drop(struct bus_consumer *c, const char *reply, uint64_t seq,
			int nd, const struct msg *m, char **err)
{
	char *dedup = xasprintf("drop:%s:%llu", c->stream, (unsigned long long)seq);
	int r = nats_publish_drop(c->bus, m, c->agent, "expired", dedup, err);
	free(dedup);
	if (r < 0)
		return -1;
	r = answer(c, reply, "+ACK", nats_retry_until(NB(c->bus)), err);
	if (r == 0 && nd > 1)
		att_drop(c, seq);
	return r;
}

/* One no-wait pull from the consumer of priority p: 1 with *out, 0 when
 * nothing is there, -1 on error. */
static int pull(struct bus_consumer *c, int p, natsMsg **out, char **err)
{
	struct natsbus *nb = NB(c->bus);
	char subj[2 * NATS_NAME_MAX];
	snprintf(subj, sizeof(subj), "$JS.API.CONSUMER.MSG.NEXT.%s.%s_%s", c->stream,
		 c->agent, nats_prio_tok[p]);
	natsMsg *m = NULL;
	natsStatus s = NATS_OK;
	/* The consumer's leader gone (no responders) or not answering (a
	 * timeout): asked again through the election. A pull that reached a
	 * leader whose answer was lost leaves at most one message claimed
	 * until its lease ends, then delivered again: at least once. */
	int64_t until = nats_retry_until(nb);
	for (int i = 0;; i++) {
		s = natsConnection_RequestString(&m, nb->nc, subj,
						 "{\"batch\":1,\"no_wait\":true}", API_WAIT_MS);
		if (!nats_retry_again(s, 0, until, i))
			break;
	}
	if (s != NATS_OK)
		return nats_fail(nb, err, s, 0, "cannot pull from the inbox of %s",
				 c->agent);
	const char *status = nats_hdr(m, "Status");
	if (status || !natsMsg_GetReply(m)) {
		natsMsg_Destroy(m);
		return 0;
	}
	*out = m;
	return 1;
}

static int nats_claim(struct bus_consumer *c, struct bus_delivery **dp, char **err)
{
	struct bus *b = c->bus;
	for (int p = 0; p < 4; p++) {
		natsMsg *nm = NULL;
		int k = pull(c, p, &nm, err);
		if (k < 0)
			return -1;
		if (k == 0)
			continue;
		jsMsgMetaData *meta = NULL;
		if (natsMsg_GetMetaData(&meta, nm) != NATS_OK) {
			natsMsg_Destroy(nm);
			return err_set(err, "a delivery of %s carries no JetStream metadata",
				       c->agent);
		}
		const char *reply = natsMsg_GetReply(nm);
		const char *data = natsMsg_GetData(nm);
		size_t len = (size_t)natsMsg_GetDataLength(nm);
		uint64_t seq = meta->Sequence.Stream;
		int nd = (int)meta->NumDelivered;
		jsMsgMetaData_Destroy(meta);
		struct msg *m = NULL;
		struct msg_errors errs = { 0 };
		const char *reason = NULL;
		char *error = NULL;
		const char *mid = nats_hdr(nm, "Madf-Id");
		if (nd > b->cfg.max_attempts) {
			reason = "max_attempts";
			error = xasprintf("the lease ran out on the last attempt "
					  "(%d deliveries)", nd - 1);
		} else if (msg_parse(data, len, &m, &errs) < 0) {
			reason = "invalid";
			error = msg_errors_join(&errs);
		} else {
			reason = bus_undeliverable(m, c->agent, &error);
		}
		msg_errors_release(&errs);
		if (reason && !strcmp(reason, "expired") && bus_drop_type(m->type)) {
			/* nobody needs a stale heartbeat: dropped and counted */
			int r = claimed_drop(c, reply, seq, nd, m, err);
			free(error);
			msg_free(&m);
			natsMsg_Destroy(nm);
			if (r < 0)
				return -1;
			p = -1;
			continue;
		}
		if (reason) {
			int r = claimed_dead(c, reply, seq, data, len, reason, error,
					     nd - 1, m, mid, err);
			free(error);
			msg_free(&m);
			natsMsg_Destroy(nm);
			if (r < 0)
				return -1;
			p = -1; /* scan again from urgent */
			continue;
		}
		struct bus_delivery *d = xcalloc(1, sizeof(*d));
		d->msg = m;
		d->attempts = nd - 1;
		d->name = xstrdup(reply);
		d->canon = xasprintf("%s:%llu", c->stream, (unsigned long long)seq);
		d->agent = xstrdup(c->agent);
		natsMsg_Destroy(nm);
		*dp = d;
		return 1;
	}
	return 0;
}

static int nats_ack(struct bus_consumer *c, struct bus_delivery *d, char **err)
{
	int r = answer(c, d->name, "+ACK", nats_retry_until(NB(c->bus)), err);
	if (r == 0 && d->attempts > 0)
		att_drop(c, canon_seq(d->canon));
	return r;
}

static int nats_nack(struct bus_consumer *c, struct bus_delivery *d,
		     const char *error, bool permanent, char **err)
{
	struct bus *b = c->bus;
	int attempts = d->attempts + 1;
	uint64_t seq = canon_seq(d->canon);
	if (permanent || attempts >= b->cfg.max_attempts) {
		char *json = msg_to_json(d->msg, true);
		size_t len = strlen(json);
		json = xrealloc(json, len + 2);
		json[len++] = '\n';
		json[len] = '\0';
		int r = claimed_dead(c, d->name, seq, json, len,
				     permanent ? "rejected" : "max_attempts", error,
				     attempts, d->msg, NULL, err);
		free(json);
		return r;
	}
	/* The failure: its time (the dead letter's first_failure) and when
	 * the message is due again (listing the retry queue). */
	struct natsbus *nb = NB(b);
	char subj[NATS_NAME_MAX], now[40], due[24];
	int64_t ms = bus_backoff_ms(&b->cfg, attempts);
	att_subject(c, seq, subj, sizeof(subj));
	util_iso8601(util_now_ns(), now, sizeof(now));
	snprintf(due, sizeof(due), "%lld", (long long)(util_now_ns() + ms * NS_PER_MS));
	natsMsg *rec = NULL;
	if (natsMsg_Create(&rec, subj, NULL, now, (int)strlen(now)) == NATS_OK &&
	    natsMsgHeader_Set(rec, "Madf-Due", due) == NATS_OK)
		js_PublishMsg(NULL, nb->js, rec, NULL, NULL);
	natsMsg_Destroy(rec);
	char nak[64];
	snprintf(nak, sizeof(nak), "-NAK {\"delay\":%lld}", (long long)(ms * NS_PER_MS));
	return answer(c, d->name, nak, nats_retry_until(nb), err);
}

static int nats_release(struct bus_consumer *c, struct bus_delivery *d, char **err)
{
	return answer(c, d->name, "-NAK", nats_retry_until(NB(c->bus)), err);
}

/* An in-progress ack: the server's ack wait (the lease) starts again;
 * recorded for listings (best effort). Asked again through an election,
 * but only for a third of the lease: the lease keeper (core/bus_lease.c)
 * holds its lock meanwhile and renews again at its next turn anyway. */
static int nats_renew(struct bus_consumer *c, const struct bus_delivery *d, char **err)
{
	int64_t until = nats_retry_until(NB(c->bus));
	int64_t turn = util_mono_ns() + c->bus->cfg.lease_s * NS_PER_S / 3;
	if (answer(c, d->name, "+WPI", turn < until ? turn : until, err) < 0)
		return -1;
	nats_lease_note(c->bus, c->agent, canon_seq(d->canon), NULL);
	return 0;
}

/* ---- the transport ------------------------------------------------------ */

static const char *nats_owner(struct bus *b)
{
	return NB(b)->owner;
}

static bool nats_owner_gone(struct bus *b, const char *owner)
{
	/* HOST-PID: gone for sure only on this host, the process dead. */
	const char *dash = strrchr(owner, '-');
	const char *mine = strrchr(NB(b)->owner, '-');
	if (!dash || !mine || dash - owner != mine - NB(b)->owner ||
	    strncmp(owner, NB(b)->owner, (size_t)(dash - owner)))
		return false;
	long pid = strtol(dash + 1, NULL, 10);
	return pid > 0 && kill((pid_t)pid, 0) < 0 && errno == ESRCH;
}

const struct bus_transport bus_nats_transport = {
	.name = "nats",
	.send = nats_send,
	.consumer_open = nats_consumer_open,
	.consumer_free = nats_consumer_free,
	.consumer_fd = nats_consumer_fd,
	.consumer_wait = nats_consumer_wait,
	.consumer_timeout = nats_consumer_timeout,
	.claim = nats_claim,
	.ack = nats_ack,
	.nack = nats_nack,
	.release = nats_release,
	.renew = nats_renew,
	.list = nats_list,
	.each_dead = nats_each_dead,
	.find = nats_find,
	.read = nats_read,
	.retry = nats_retry,
	.remove = nats_remove,
	.kill = nats_kill,
	.requeue = nats_requeue,
	.sweep = nats_sweep,
	.gc = nats_gc,
	.monitor_open = nats_monitor_open,
	.monitor_free = nats_monitor_free,
	.monitor_fd = nats_monitor_fd,
	.monitor_process = nats_monitor_process,
	.monitor_stats = nats_monitor_stats,
	.forget = nats_forget,
	.events_publish = nats_events_publish,
	.events_fetch = nats_events_fetch,
	.log_append = nats_log_append,
	.log_each = nats_log_each,
	.log_agents = nats_log_agents,
	.owner = nats_owner,
	.owner_gone = nats_owner_gone,
	.close = nats_close,
};
