import { Router } from 'express';
import { allowedMethods } from '../../src/http/method-not-allowed';

describe('allowedMethods', () => {
  const noop = () => undefined;
  const jobs = Router();
  jobs.get('/', noop);
  jobs.get('/:run_id', noop);
  jobs.delete('/:run_id', noop);
  jobs.post('/:run_id/cancel', noop);
  const companies = Router();
  companies.get('/companies/:vid', noop);
  const root = Router();
  root.use(companies);
  root.use('/jobs', jobs);
  root.post('/tierviewjob', noop);

  it('reads routes of routers mounted with and without a path', () => {
    expect(allowedMethods(root, '/companies/boeing')).toEqual(['GET', 'HEAD']);
    expect(allowedMethods(root, '/companies/boeing/')).toEqual(['GET', 'HEAD']);
    expect(allowedMethods(root, '/jobs/')).toEqual(['GET', 'HEAD']);
    expect(allowedMethods(root, '/jobs/7')).toEqual(['DELETE', 'GET', 'HEAD']);
    expect(allowedMethods(root, '/jobs/7/cancel/')).toEqual(['POST']);
    expect(allowedMethods(root, '/tierviewjob')).toEqual(['POST']);
  });

  it('finds nothing for a path no route has, or one that cannot be decoded', () => {
    expect(allowedMethods(root, '/nope')).toEqual([]);
    expect(allowedMethods(root, '/companies/a/b')).toEqual([]);
    expect(allowedMethods(root, '/jobs/%E0%A4%A')).toEqual([]);
  });
});
