/* SPDX-License-Identifier: MIT */
/* The GPU's reports into a report (memcheck_collect.h). */
#include "core/memcheck_layout.h"
#include "memcheck/memcheck_collect.h"

int mc_collect_log(const struct mc_dev *d, struct mc_report *r,
		   uint32_t *drained)
{
	const struct mc_log_rec *log = mc_dev_log_host(d);
	int first = 0;

	while (*drained < MC_LOG_CAP &&
	       __atomic_load_n(&log[*drained].ready, __ATOMIC_ACQUIRE)) {
		int err = mc_report_add(r, &log[*drained].v);

		if (err && !first)
			first = err;
		(*drained)++;
	}
	return first;
}

int mc_collect_counts(struct mc_dev *d, struct mc_report *r, uint32_t *lost)
{
	uint32_t next = 0, count;
	int res;

	*lost = 0;
	for (size_t i = 0; i < mc_report_sites(r); i++) {
		uint32_t site = mc_report_site_at(r, i);

		res = mc_dev_site_count(d, site, &count);
		if (res)
			return res;
		mc_report_set_count(r, site, count);
	}
	res = mc_dev_taken(d, &next);
	if (!res && next > MC_LOG_CAP)
		*lost = next - MC_LOG_CAP;
	return res;
}
