// SPDX-License-Identifier: LGPL-2.1-or-later
/* The program both launchers start: a dynamically linked PIE that exits. */
int main(void)
{
	return 0;
}
