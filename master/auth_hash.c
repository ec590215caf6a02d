/*
 * Password hashing off the event loop (nopsd(8), AUTHENTICATION): bcrypt
 * takes ~57 ms at cost 10 and ~230 ms at 12, so a burst of logins in the
 * master's event loop would hold every other answer, detection and apply
 * behind it.  A small pool of threads runs auth_password_verify(); each
 * result goes back to the event loop through a pipe, and the caller's
 * callback runs there, never in a thread.  The threads touch nothing
 * but their job: the password, the hash and the result.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/resource.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "conf.h"
#include "master.h"
#include "auth.h"

#define AUTH_HASH_NICE	10

struct auth_hash_job {
	TAILQ_ENTRY(auth_hash_job) ahj_entry;
	char		*ahj_pw;
	size_t		 ahj_pwlen;
	char		*ahj_hash;
	int		 ahj_result;
	auth_hash_cb	 ahj_cb;
	void		*ahj_arg;
};
TAILQ_HEAD(auth_hash_jobs, auth_hash_job);

static pthread_mutex_t		 ah_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t		 ah_cond = PTHREAD_COND_INITIALIZER;
static struct auth_hash_jobs	 ah_todo = TAILQ_HEAD_INITIALIZER(ah_todo);
static struct auth_hash_jobs	 ah_done = TAILQ_HEAD_INITIALIZER(ah_done);
static size_t			 ah_njobs;	/* queued, running or done */
static pthread_t		 ah_threads[AUTH_HASH_THREADS];
static int			 ah_pipe[2] = { -1, -1 };
static struct event		*ah_ev;

static void
auth_hash_job_free(struct auth_hash_job *j)
{
	freezero(j->ahj_pw, j->ahj_pwlen + 1);
	free(j->ahj_hash);
	free(j);
}

static void *
auth_hash_thread(void *arg)
{
	struct auth_hash_job	*j;
	char			 c = 0;

	/*
	 * Below the event loop: on a busy machine the loop's answers come
	 * first and logins wait (a failure only loses that).
	 */
	(void)setpriority(PRIO_PROCESS, (id_t)gettid(), AUTH_HASH_NICE);
	for (;;) {
		pthread_mutex_lock(&ah_lock);
		while ((j = TAILQ_FIRST(&ah_todo)) == NULL)
			pthread_cond_wait(&ah_cond, &ah_lock);
		TAILQ_REMOVE(&ah_todo, j, ahj_entry);
		pthread_mutex_unlock(&ah_lock);

		j->ahj_result = auth_password_verify(j->ahj_pw, j->ahj_pwlen,
		    j->ahj_hash);
		explicit_bzero(j->ahj_pw, j->ahj_pwlen);

		pthread_mutex_lock(&ah_lock);
		TAILQ_INSERT_TAIL(&ah_done, j, ahj_entry);
		pthread_mutex_unlock(&ah_lock);
		/* A full pipe has a wakeup pending already. */
		(void)write(ah_pipe[1], &c, 1);
	}
	return NULL;
}

/* In the event loop: hand each result to its callback. */
static void
auth_hash_ready(int fd, short event, void *arg)
{
	struct auth_hash_jobs	 done = TAILQ_HEAD_INITIALIZER(done);
	struct auth_hash_job	*j;
	char			 buf[64];

	while (read(fd, buf, sizeof(buf)) > 0)
		;
	pthread_mutex_lock(&ah_lock);
	TAILQ_CONCAT(&done, &ah_done, ahj_entry);
	pthread_mutex_unlock(&ah_lock);
	while ((j = TAILQ_FIRST(&done)) != NULL) {
		TAILQ_REMOVE(&done, j, ahj_entry);
		ah_njobs--;
		j->ahj_cb(j->ahj_result, j->ahj_arg);
		auth_hash_job_free(j);
	}
}

/* The pool starts with the first login: no threads while nobody logs in. */
static void
auth_hash_start(void)
{
	sigset_t	 all, old;
	size_t		 i;
	int		 rc;

	if (pipe2(ah_pipe, O_NONBLOCK | O_CLOEXEC) == -1)
		fatal("pipe2");
	if ((ah_ev = event_new(nopsd_env->n_base, ah_pipe[0],
	    EV_READ | EV_PERSIST, auth_hash_ready, NULL)) == NULL ||
	    event_add(ah_ev, NULL) == -1)
		fatalx("event");
	/* Signals are the event loop's: the threads take none. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (i = 0; i < AUTH_HASH_THREADS; i++)
		if ((rc = pthread_create(&ah_threads[i], NULL,
		    auth_hash_thread, NULL)) != 0) {
			errno = rc;
			fatal("pthread_create");
		}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	log_debug("password hashing: %d threads", AUTH_HASH_THREADS);
}

int
auth_hash_verify(const char *pw, size_t pwlen, const char *hash,
    auth_hash_cb cb, void *arg)
{
	struct auth_hash_job	*j;

	if (ah_njobs >= AUTH_HASH_QUEUE_MAX)
		return -1;
	if (ah_ev == NULL)
		auth_hash_start();
	if ((j = calloc(1, sizeof(*j))) == NULL ||
	    (j->ahj_pw = malloc(pwlen + 1)) == NULL ||
	    (j->ahj_hash = strdup(hash)) == NULL)
		fatal(NULL);
	memcpy(j->ahj_pw, pw, pwlen);
	j->ahj_pw[pwlen] = '\0';
	j->ahj_pwlen = pwlen;
	j->ahj_cb = cb;
	j->ahj_arg = arg;
	ah_njobs++;
	pthread_mutex_lock(&ah_lock);
	TAILQ_INSERT_TAIL(&ah_todo, j, ahj_entry);
	pthread_cond_signal(&ah_cond);
	pthread_mutex_unlock(&ah_lock);
	return 0;
}
